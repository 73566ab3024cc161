r"""SHA-256 of the published raw files, by path under the data root.

Computed with ``sha256sum`` from the copies in ``shared/datasets`` (the files
as their public sources publish them). Regenerate with
``python -m fedgraph.data.checksums DATA_ROOT`` after checking a new copy.
"""

from __future__ import annotations

SHA256: dict[str, str] = {
    "dbp-5l/entity/el.tsv": (
        "d9db5a9a1faae6d3acb2c811130a1a7a8c8e325c636695f613a76117e3878013"
    ),
    "dbp-5l/entity/en.tsv": (
        "37560dfa953f0a485f56b1f085b29a95c63ce153d073e7e651fc71cec0733aa5"
    ),
    "dbp-5l/entity/es.tsv": (
        "b0fda6cbf9c58b1e1637740aa266ca9dbc2162a3dd52a170bf2dc848b8f80b50"
    ),
    "dbp-5l/entity/fr.tsv": (
        "0ed055479431f6c15db29b98142ba95c846b37cdfd5f449b8b64020c30919ecb"
    ),
    "dbp-5l/entity/ja.tsv": (
        "c2a69c58d8c0aaaa4394ea693d36738e5c3d83486a86b418dda29ccf9b2868f4"
    ),
    "dbp-5l/kg/el-test.tsv": (
        "5a92d7bf13cf757fea735cf6f1627dc2c3b3d7a9dca4d0193849d74355151da2"
    ),
    "dbp-5l/kg/el-train.tsv": (
        "5d3da01697b17adbf7e52ab9f7c69de86e26354f6563d6538f9e7a9a1a660a57"
    ),
    "dbp-5l/kg/el-val.tsv": (
        "3d17aaf605f382ba6ec35e06242f65304262aaf60da26cdea8754b7bbf319e4d"
    ),
    "dbp-5l/kg/en-test.tsv": (
        "7041e57ab44cae2d4554c5aad2888ca7c9f28e8111c925430d6cf12a9981257c"
    ),
    "dbp-5l/kg/en-train.tsv": (
        "6743c64b7522e12c9e8e9a96d27114e1dee81c5cc35bb2ede9bb6095ad70a4de"
    ),
    "dbp-5l/kg/en-val.tsv": (
        "9079d8e43e6b09c2ebf83a678a73b1de65332198a283f440ec8d332eeecb5cbf"
    ),
    "dbp-5l/kg/es-test.tsv": (
        "ca4d17f24556935d566f3f4fc6f51a25aef78239a67c65d1df6f826c8088a42e"
    ),
    "dbp-5l/kg/es-train.tsv": (
        "4d6439b9776b7f2d9d8e774c84acc8333c492a3380d97cf9cbf708694893e619"
    ),
    "dbp-5l/kg/es-val.tsv": (
        "fa84460c562107ada7485c12030ddf7c57cbc30ab319e3362dbfdd9c1e2e3f9b"
    ),
    "dbp-5l/kg/fr-test.tsv": (
        "f39b32d4222f5a903fa07d4f687a2e92e0a054a2aaf8fce2e16151af7b9781b9"
    ),
    "dbp-5l/kg/fr-train.tsv": (
        "26b587ef18c8ae8190dec97fdacf0aad3500564715c84f4d0178125563c3b4c2"
    ),
    "dbp-5l/kg/fr-val.tsv": (
        "839140da5b0f7cba17d9ea856be2094a91618a3b389433eed814b6a79bedb2d4"
    ),
    "dbp-5l/kg/ja-test.tsv": (
        "6efc4c20fc343ac4c5813d28e850d8ca46b2da8f452cc25e39c3d57cef312e28"
    ),
    "dbp-5l/kg/ja-train.tsv": (
        "bbc337115cd5ef6db3f98b316fe8d171f3d20bbfc7b70076758e585c34766c1c"
    ),
    "dbp-5l/kg/ja-val.tsv": (
        "eff9a10e9300d222444433ac6a930882b5905bb6caad1484425914ea6921ad63"
    ),
    "dbp-5l/relations.txt": (
        "2b16826c685ac784792c735e789ea3b19d40a10cbdee9fffe04915d3abb588a8"
    ),
    "dbp-5l/seed_alignlinks/el-en.tsv": (
        "523370fba7580bb10b8e9dd5f3788d73664fe191def69b7add0695525cbebcb8"
    ),
    "dbp-5l/seed_alignlinks/el-es.tsv": (
        "00c744cf498a5d34f31598f1a76c9d36120591f80d2dba8b927901fbd6dc9f0e"
    ),
    "dbp-5l/seed_alignlinks/el-fr.tsv": (
        "f2214d7f7978c8c454f16b6b8a76c1c0b86255dcc98e098bedba538ed7b1339a"
    ),
    "dbp-5l/seed_alignlinks/el-ja.tsv": (
        "103baf3cc4896af82d03e9d65fe2278a63e0d67145af2b78b16919461585e43e"
    ),
    "dbp-5l/seed_alignlinks/en-fr.tsv": (
        "1970e21b82e09a50b944eb6fa5d691fac102563fc6177b5e6491931920afe6c1"
    ),
    "dbp-5l/seed_alignlinks/es-en.tsv": (
        "e92ad7d75818e851f8d1860bd6ec5d5c7f3491a27c49a8fc8045ed7eb000202c"
    ),
    "dbp-5l/seed_alignlinks/es-fr.tsv": (
        "c1f892d7c015fdf7ae41207c50e6e6fff0c1144411e810bd9ed221bf8309dd75"
    ),
    "dbp-5l/seed_alignlinks/ja-en.tsv": (
        "04a009f51f6f9e372dbd98bb1f5af6978db32df1575cd84be9107ed97341bd53"
    ),
    "dbp-5l/seed_alignlinks/ja-es.tsv": (
        "3e84cf0f4540bf2e7b60854ba644c7c61fce8e6395a2c9f0fee9b942fd86b252"
    ),
    "dbp-5l/seed_alignlinks/ja-fr.tsv": (
        "c032f15074aede29ef9bee0276e51eb412272d64e54991df17241351ce8527f4"
    ),
    "fb15k-237/test.txt": (
        "5711cf41623ceb4eacc50eb6108a3ca6565c7492e3caaf82a3e355cc660d1574"
    ),
    "fb15k-237/train.txt": (
        "6e4c2782169af21e9743f3b1d200886f5d595bf6bc504ec1351720949c5cdfae"
    ),
    "fb15k-237/valid.txt": (
        "cf6309010852f6a8d47a45df830a426415d1ee6f7a3970a8376ff1fb81db4a5c"
    ),
    "fedlu-fb15k-237/C10/client0/test.txt": (
        "0029a82932a80ff4a8f27ca3e73576b1463c620c8768020b6d6fdc48ab1b42f4"
    ),
    "fedlu-fb15k-237/C10/client0/train.txt": (
        "6ae70da993c5924afff570a39d77a4eead5c8d91eab0a77e106dbf6f87cf073b"
    ),
    "fedlu-fb15k-237/C10/client0/unlearn.txt": (
        "725903324ab2656c30fb8e0655c5629a3be77444a13c3c2c52125a33e25b9011"
    ),
    "fedlu-fb15k-237/C10/client0/valid.txt": (
        "7e0af7c634d7cba44db4f994656fb0dda441883c314c8d7a98894b5dcfb2de35"
    ),
    "fedlu-fb15k-237/C10/client1/test.txt": (
        "8a19317cabaad9e5957b53e6456c3f6da6ab5b43bf81eef58475fed496ccaabb"
    ),
    "fedlu-fb15k-237/C10/client1/train.txt": (
        "f96c8b337f9c9e0ed58356b17bed2273509e825e665f54e2011bb306d5876ff8"
    ),
    "fedlu-fb15k-237/C10/client1/unlearn.txt": (
        "0ce7bc7920b2f0081fc8400cb18d63771181bc3593ccf98d9f9b0a2bdafc2175"
    ),
    "fedlu-fb15k-237/C10/client1/valid.txt": (
        "3138b6b3426fb69792e1adc9e02e615541223c1fab6540e50cabef66cc9d13c2"
    ),
    "fedlu-fb15k-237/C10/client2/test.txt": (
        "2da8d1368bc830bc0b7ea996695de866db25d00a51d0a17b8dae061323481913"
    ),
    "fedlu-fb15k-237/C10/client2/train.txt": (
        "29980f50ead9adb454097c59795ca81090faf9acd27391c918498a85a324004f"
    ),
    "fedlu-fb15k-237/C10/client2/unlearn.txt": (
        "acc86d7cd7ec48bafa660287c951f630034e29cb5e7107f07358baa29dc86f30"
    ),
    "fedlu-fb15k-237/C10/client2/valid.txt": (
        "7ffebe2d8c8a06d001ff6cefc7484aa2e9cac45d7d577a6ba4f216a5b1a5a95f"
    ),
    "fedlu-fb15k-237/C10/client3/test.txt": (
        "fe2a02dfaf0afdf44977c3bfc0cf7604aefb458dd3b466745bd52125efc80ab7"
    ),
    "fedlu-fb15k-237/C10/client3/train.txt": (
        "60730e48e0d2b5c9bbf0e4901b292ab49f7cdabea9b543f270cadf718fee4b9f"
    ),
    "fedlu-fb15k-237/C10/client3/unlearn.txt": (
        "04b696f54722a98b3443ad390b5e2bbbae6352b96d00dc3d1afc01439d6085c1"
    ),
    "fedlu-fb15k-237/C10/client3/valid.txt": (
        "6790eabfb2cc55c342b8bff2f92472960bf3e14c52ae43ee1e85c03b4e3dad59"
    ),
    "fedlu-fb15k-237/C10/client4/test.txt": (
        "8c7ac338fb9b5fa5d8c031e82d4ef64ec9414e20e603c34a26e418764ea4140a"
    ),
    "fedlu-fb15k-237/C10/client4/train.txt": (
        "294828e6b78a756b721a4783ba3861f78e9d0f933a0ad60595ce6229c5003d46"
    ),
    "fedlu-fb15k-237/C10/client4/unlearn.txt": (
        "7a4e6e1100d510e72db7ac51c528db345fc2698030239204663420787895af85"
    ),
    "fedlu-fb15k-237/C10/client4/valid.txt": (
        "96bb76baee75cc87175859a2d5dfef74199f843f79137e1344a8043c7abc4e94"
    ),
    "fedlu-fb15k-237/C10/client5/test.txt": (
        "ad5b9cbc453f448b10865aad670f78d65437289b8bf30ed56fe2d3671e25fc49"
    ),
    "fedlu-fb15k-237/C10/client5/train.txt": (
        "ee29cf5582acd1c4ff90598240e9991d746d93bd99fde9ffefdb1127cd914b35"
    ),
    "fedlu-fb15k-237/C10/client5/unlearn.txt": (
        "d433098383f87b0a557e02237e5262483b8556fd8ed4339e0df27f35a52a9f2c"
    ),
    "fedlu-fb15k-237/C10/client5/valid.txt": (
        "bc140d477cbf6318e9c17b5bda3ace180fe842cb7398a554bd25a9f5e7531c81"
    ),
    "fedlu-fb15k-237/C10/client6/test.txt": (
        "f85adacd102f1350f75af6c94f363d0714764dc2d69ae6f2a4831704aac9caba"
    ),
    "fedlu-fb15k-237/C10/client6/train.txt": (
        "a00e1852b14706871f98d68eb1bfec69a982780fa6c82263a822ad4848027ee6"
    ),
    "fedlu-fb15k-237/C10/client6/unlearn.txt": (
        "22076b6a14b09bad3693548bec4590434204429d87456f37cb9fd088ee46cdf9"
    ),
    "fedlu-fb15k-237/C10/client6/valid.txt": (
        "e29d6c2012561b322e18e907d510b6b8803e39d9d451dca3ce69e401b652bdbd"
    ),
    "fedlu-fb15k-237/C10/client7/test.txt": (
        "fd05580cb3ace56a05a7d3db7869ec5fdd2a809c16dd174ac9d2483f3da58adf"
    ),
    "fedlu-fb15k-237/C10/client7/train.txt": (
        "69e5a4da961fc1986a544f5669763474a6883fb1ad615db935af0c0840429248"
    ),
    "fedlu-fb15k-237/C10/client7/unlearn.txt": (
        "61b4aefd6fb8138d1ab3fd9be87f0e7657a4f24a09c1f61b5e53172ab127cb97"
    ),
    "fedlu-fb15k-237/C10/client7/valid.txt": (
        "f24265abbd81174aa825a9f32b9fe41676773f434de83a128b67382c7467b9ec"
    ),
    "fedlu-fb15k-237/C10/client8/test.txt": (
        "ccf63ecfbe842130dcf9b4c2e507847c19cd7fe02fd662ded300a7081bc5d8c5"
    ),
    "fedlu-fb15k-237/C10/client8/train.txt": (
        "5961ea97fa4d740c65ac9b50b33bc06a73e8b4b4005c656d03e98f17e8dbcf43"
    ),
    "fedlu-fb15k-237/C10/client8/unlearn.txt": (
        "9ab660e906a462055aca15d0be8ec17e4c1b93f86bb6506faac2682addc0dca2"
    ),
    "fedlu-fb15k-237/C10/client8/valid.txt": (
        "24f9dd04801693a9f4745fc1e295e7a2f7a73a86e05ea3b15d00365c677c10d5"
    ),
    "fedlu-fb15k-237/C10/client9/test.txt": (
        "83171bbe8a35e511a9ad1706bdff880726d771053f88fe4e76f55c448ddd4c7c"
    ),
    "fedlu-fb15k-237/C10/client9/train.txt": (
        "6c5bd023806f743b9c033324a345951d4c9f64c119f8a2d5e423fa6aaa01024d"
    ),
    "fedlu-fb15k-237/C10/client9/unlearn.txt": (
        "cd06aea8050e60386c40cf4a9b63a60d516799e9a18bdb9823083684cd47b383"
    ),
    "fedlu-fb15k-237/C10/client9/valid.txt": (
        "43276f177b7425a5e314217022d5f7050da0874842b43e8d9fef93a6f496efcc"
    ),
    "fedlu-fb15k-237/C3/client0/test.txt": (
        "f3c2d7f9149472287508c888dc373701b087f3c207a09872f0af764cf6d8b73c"
    ),
    "fedlu-fb15k-237/C3/client0/train.txt": (
        "b082d81f4c172848b8e8c636bade31a5ce3a6d9f5e1ad3d3c836d6baf52229ba"
    ),
    "fedlu-fb15k-237/C3/client0/unlearn.txt": (
        "dfa07568e6d8ee40ae0415c9b81caf4ad0ceb008084f619984d4ead0659bb8c2"
    ),
    "fedlu-fb15k-237/C3/client0/valid.txt": (
        "d8f14eaa3da3907c67bd32579ed23fb788891d36a8040d20444a4fa1751c1ed2"
    ),
    "fedlu-fb15k-237/C3/client1/test.txt": (
        "f917949cc1f8d1a87d1e4e95ec52abcaee822679f68d0061843bcfc62339c248"
    ),
    "fedlu-fb15k-237/C3/client1/train.txt": (
        "f8ff61e8dc7a8e3cead4e75d7021a37b0f7780000b3d9683e5c6c80d78948b22"
    ),
    "fedlu-fb15k-237/C3/client1/unlearn.txt": (
        "5249ddf0271ba5115cdd4ad20ad716264bb75eb8f2694c30225579b1527d845c"
    ),
    "fedlu-fb15k-237/C3/client1/valid.txt": (
        "eaf39583ca937169fc734efb2bd1d04101baf278445304e07bc64f2fc47487a5"
    ),
    "fedlu-fb15k-237/C3/client2/test.txt": (
        "61bf4226a39492959cd15ebf85714597dc6874db80e6bc71fef3c4be0a8f7fea"
    ),
    "fedlu-fb15k-237/C3/client2/train.txt": (
        "eca554d356306517404037e62f347a7c7f9dc643835c9df038cdd9e659345c0a"
    ),
    "fedlu-fb15k-237/C3/client2/unlearn.txt": (
        "e13e639243a88789976a931fd5b96f480f515d924e53ea49033cd1a720cae57f"
    ),
    "fedlu-fb15k-237/C3/client2/valid.txt": (
        "f2404080ca1ebc8a9e0bd8a14d3e1daef0c1d7d4eef84240715d1c047f6c6c4c"
    ),
    "fedlu-fb15k-237/C5/client0/test.txt": (
        "7234f97cc7800f187f9bbe705b766db0032391daa36cdb456446d14a527cbb6e"
    ),
    "fedlu-fb15k-237/C5/client0/train.txt": (
        "087939fb798335d834851bff4aa5baaec555d8b0cc2eafb40416d8f890e94f92"
    ),
    "fedlu-fb15k-237/C5/client0/unlearn.txt": (
        "61c4c2f6247147f70b5cc292d038497d37ad6a8c7bf7987e23173172798e05f2"
    ),
    "fedlu-fb15k-237/C5/client0/valid.txt": (
        "8fa2c7f07d67a9ff840d4065875d952fd5a1c8a384c0bd8c527cc9c87dfe5e66"
    ),
    "fedlu-fb15k-237/C5/client1/test.txt": (
        "67b149040f693ec181963bb745a8b1e22d8705a7d8c953c8340286c7b01b806f"
    ),
    "fedlu-fb15k-237/C5/client1/train.txt": (
        "b5c1dd419697285779d1d68f711dc25d707801a38779f9d06a82f6e828aa91ce"
    ),
    "fedlu-fb15k-237/C5/client1/unlearn.txt": (
        "4422045ad6705f15c9a5481a0240a4da52758d32965b26cda0cb913ca4a32ec2"
    ),
    "fedlu-fb15k-237/C5/client1/valid.txt": (
        "c0c9e18799616c21b2a8c5aa878408b9828e0c410c773e7f8e25fe1df94b3f19"
    ),
    "fedlu-fb15k-237/C5/client2/test.txt": (
        "13af5671b0388ef035efb113b15620139fd57d2eaef9cbc24110a00aa1445269"
    ),
    "fedlu-fb15k-237/C5/client2/train.txt": (
        "c745a173507511cb232453c637a716c3ad0480f90b0abc3f9fa8a185a84cd491"
    ),
    "fedlu-fb15k-237/C5/client2/unlearn.txt": (
        "d59126dcb02043e6ac60316133cb49944e9434149d59c23854ad826d8ef80f99"
    ),
    "fedlu-fb15k-237/C5/client2/valid.txt": (
        "92ab57048034b75178ee7264faedd335ef3e4ad37961a337e2df8a075bab9d55"
    ),
    "fedlu-fb15k-237/C5/client3/test.txt": (
        "775f8da6bf24363df4f30f13c63cefa88e68666d6e3bacb8e5e7b1dd24ff4b00"
    ),
    "fedlu-fb15k-237/C5/client3/train.txt": (
        "3d0217d5fa4cec66db2d9870fb52fc80422e77bc59360564257a26973442c76c"
    ),
    "fedlu-fb15k-237/C5/client3/unlearn.txt": (
        "d80cf728e36a75a4da81c32bc1aee0533435f43a4c2f8173b6b25b9374b31175"
    ),
    "fedlu-fb15k-237/C5/client3/valid.txt": (
        "5f64c43d16202c8954ef609e932a89f451f5c8156760ac3e41011c9150a105de"
    ),
    "fedlu-fb15k-237/C5/client4/test.txt": (
        "28396fb96aae3c8fe5de88b7d023a32435322c05a1ee4488951d779b2b34a312"
    ),
    "fedlu-fb15k-237/C5/client4/train.txt": (
        "519cacb8820d3b93b6ef0157bb1973564aeba3fba496d895b5bcadfdbf1233ba"
    ),
    "fedlu-fb15k-237/C5/client4/unlearn.txt": (
        "48f767d3ae2a8655ecbedbd2b741e27a7b161d6ec586a4dae60028640972897e"
    ),
    "fedlu-fb15k-237/C5/client4/valid.txt": (
        "b601134ff5add0e3c93341a4c98e0788528952899661f514f63c044dbad995ab"
    ),
    "fedlu-fb15k-237/R10/client0/test.txt": (
        "54f2d08abefde9995cdf223633fcdc73fd1bc777a0a679f5e83c951d6d36098d"
    ),
    "fedlu-fb15k-237/R10/client0/train.txt": (
        "3d0b23fb7a565138219ce141d591b47e228d1768de2ba7aa92ad138999794668"
    ),
    "fedlu-fb15k-237/R10/client0/unlearn.txt": (
        "ba21baa157c17fbc6fe98f48cf97d77fe5197991c5db1bc94f223535e9127f97"
    ),
    "fedlu-fb15k-237/R10/client0/valid.txt": (
        "03de1cb343996d18e843c98ba7c5a4a3a1f46e26af220fce947af4b99cea715d"
    ),
    "fedlu-fb15k-237/R10/client1/test.txt": (
        "6c2d65d63783b72dcaf917a2858ba072f6bb6d83d1c88769065c1cdc96d626bd"
    ),
    "fedlu-fb15k-237/R10/client1/train.txt": (
        "9c9666bcad9cb531c477773c257d19e3a265ff5271b4a42728da67c02faff29c"
    ),
    "fedlu-fb15k-237/R10/client1/unlearn.txt": (
        "687264cc0077486948200dede499631d3dab7b2f9e2b4c61ebacbfe45f4ff9b4"
    ),
    "fedlu-fb15k-237/R10/client1/valid.txt": (
        "ac4bcb31844b0fa83583a129c43bd026aeebd5ef207e4ce295bf64eea173766d"
    ),
    "fedlu-fb15k-237/R10/client2/test.txt": (
        "9ff6cada6a3e926b097700736718d89dca60104e77ec7ce1382b9c3a12b2a51d"
    ),
    "fedlu-fb15k-237/R10/client2/train.txt": (
        "42c684b8f4600892539eb618748438da153e5f20f359e743243a946d65aae3be"
    ),
    "fedlu-fb15k-237/R10/client2/unlearn.txt": (
        "c803b49679cae69308457ebbc343c4d8747633cc9abf919773a5cb6a4bbde9a3"
    ),
    "fedlu-fb15k-237/R10/client2/valid.txt": (
        "e5b94f855396965bddc75f7cd8fc7b3731a6b1b8eebace1b27feef598127240a"
    ),
    "fedlu-fb15k-237/R10/client3/test.txt": (
        "7799742c2e95be812cafd0755ddba0b98f15bf46072f5735042ba51682f68797"
    ),
    "fedlu-fb15k-237/R10/client3/train.txt": (
        "cb893211d056cb16c017f0588c9ef2d92270f1c04fc0104f0a767bc822c45532"
    ),
    "fedlu-fb15k-237/R10/client3/unlearn.txt": (
        "d57a3e1d8a23bf8022e3030c7748616aa2f5b29dde40d03f65e4f24fb1b7123e"
    ),
    "fedlu-fb15k-237/R10/client3/valid.txt": (
        "1eb8e9adf50d0a1b61a279afbd0ff3d7576cd1ae2ac1afa413a810a39346e88f"
    ),
    "fedlu-fb15k-237/R10/client4/test.txt": (
        "e23d29b5e704388c43cab210a5a3445a8a2422a8727e27609195a64223a18939"
    ),
    "fedlu-fb15k-237/R10/client4/train.txt": (
        "fdd25f6591904217136b1f70db02ef919d5a2bb12dbc4282b44e94dc26214910"
    ),
    "fedlu-fb15k-237/R10/client4/unlearn.txt": (
        "97f1fe9926d7ac7e4b5be6be85ab14bcaa987b1c28ca7ed1ac1d271568b77bd9"
    ),
    "fedlu-fb15k-237/R10/client4/valid.txt": (
        "80f560f63b022d50106e3da778853616c7e5a7efaf0bc974f026e7c021bdcdb2"
    ),
    "fedlu-fb15k-237/R10/client5/test.txt": (
        "54d94fb5826752d119f5eb8da19cac64315b47763e2dd4507be9ab4e026acfe1"
    ),
    "fedlu-fb15k-237/R10/client5/train.txt": (
        "4138566bb23f79adeca31a1a25af80e935cf77c6b6969643c7bfe63b49cb48ba"
    ),
    "fedlu-fb15k-237/R10/client5/unlearn.txt": (
        "0ec6ce5126b655e3e5e976941ed00983a0a10ac04039ed84352bc437691f09a8"
    ),
    "fedlu-fb15k-237/R10/client5/valid.txt": (
        "f0c9f369f9171bd8b85e1db0bbba93371e36e767510cdb5f5af1a764bafb17d1"
    ),
    "fedlu-fb15k-237/R10/client6/test.txt": (
        "dcfa75951b808a514bde092feb3a8c0b0dff6b2ec0e59c88e5af6b3d0a15520a"
    ),
    "fedlu-fb15k-237/R10/client6/train.txt": (
        "60a54d3693ea440f7dd104f27bb69c7871c833b6ce44be0c35462d4d187e206c"
    ),
    "fedlu-fb15k-237/R10/client6/unlearn.txt": (
        "3bb72e2f83b683c7cf0f69415669fadf3b0de27b44655275d8511da8a42d2f94"
    ),
    "fedlu-fb15k-237/R10/client6/valid.txt": (
        "dcaf917b8274d38c1ca266d706ecca0538385325ae7b87a1eb07de7e82814334"
    ),
    "fedlu-fb15k-237/R10/client7/test.txt": (
        "97e9c7a6a8918b5cce9e82fbcd6d1260baefa6b7b8a4144ded393555781dc309"
    ),
    "fedlu-fb15k-237/R10/client7/train.txt": (
        "8205af4582c146e867d113b9ce30c9524796a309e6eac911098b4437e64c4d7e"
    ),
    "fedlu-fb15k-237/R10/client7/unlearn.txt": (
        "6dced77f5a0783b4f70a8d5c9719e9cef92ff78b8d0890b6ca3a25f9899fa538"
    ),
    "fedlu-fb15k-237/R10/client7/valid.txt": (
        "da9b3c4950bf69e3f984a1c6a1e35c3395b9e6878106d4a63bcfbff6d940ea14"
    ),
    "fedlu-fb15k-237/R10/client8/test.txt": (
        "4b6a0a53f846c42e0bd7942b1779180711f39e857cbca6648b1b42e976043000"
    ),
    "fedlu-fb15k-237/R10/client8/train.txt": (
        "4b370717b97418e0a47ec3d5ada10d783ef9e67670a90bbbbb633c720628cfce"
    ),
    "fedlu-fb15k-237/R10/client8/unlearn.txt": (
        "d8bf81beef551e9585cd0c9bf8ecd8f2655531a3d9ae39cee5d4f89f094659f6"
    ),
    "fedlu-fb15k-237/R10/client8/valid.txt": (
        "a9e0d1bc171f0d804e650cad11c38abd3012e183541ef8f81ad040d213d51527"
    ),
    "fedlu-fb15k-237/R10/client9/test.txt": (
        "671dbe2735117368087ebdf387bcd0819548d769f9794f3024348903f9e2af34"
    ),
    "fedlu-fb15k-237/R10/client9/train.txt": (
        "e829f20842eae5285d11da8be9cef884b94ddd03f9fb2d3c88cece8ed54018d1"
    ),
    "fedlu-fb15k-237/R10/client9/unlearn.txt": (
        "997ba85489890cd856d4c16137d90cac0dbbc6e78480963870be3b3046cced11"
    ),
    "fedlu-fb15k-237/R10/client9/valid.txt": (
        "23677c1a6bfc291dfb62005d12ee4525e015e92db5f78c43af584f35f02bd998"
    ),
    "fedlu-fb15k-237/R3/client0/test.txt": (
        "057692fd7b9e8ed58edb20bde92dac353181714c94fcede96d7538f2c5ad38da"
    ),
    "fedlu-fb15k-237/R3/client0/train.txt": (
        "d386f68b610b37a576f6f32ca88f867fccc5e0afcececc4c2eaa97455d1e9915"
    ),
    "fedlu-fb15k-237/R3/client0/unlearn.txt": (
        "6d4869489ad89a98d5fc957d966980a72472869c3bdd29c8cfe22c3260971c1b"
    ),
    "fedlu-fb15k-237/R3/client0/valid.txt": (
        "194d6868e2e0374fda545113b6f773607490ad2bc4d760b6497b9899fac77d96"
    ),
    "fedlu-fb15k-237/R3/client1/test.txt": (
        "09430eecd7ac5476d1c1f878cde3d33dcc75f0f8d61d151c8af025aeeec89ab3"
    ),
    "fedlu-fb15k-237/R3/client1/train.txt": (
        "15fec42aad449ec0685de93aa16ca31227d2f7d3587b05c62e477c0f7f8911b8"
    ),
    "fedlu-fb15k-237/R3/client1/unlearn.txt": (
        "bf3919ca49c0da3ac6f5beec53f72142dfe11c1e5c2885f8eafcc94f958aa5db"
    ),
    "fedlu-fb15k-237/R3/client1/valid.txt": (
        "6398422520b697b67fe71c30a772118feedfa3a40b816054de993913bf39b178"
    ),
    "fedlu-fb15k-237/R3/client2/test.txt": (
        "60838875c493034fcc73fcba5d1acba01aa2132d74c3ac40a018e13da0e2c05c"
    ),
    "fedlu-fb15k-237/R3/client2/train.txt": (
        "622ce8d0f2da5bd2206138203a5e34596523a23e1070e1ee5d0f6ad29fbf788b"
    ),
    "fedlu-fb15k-237/R3/client2/unlearn.txt": (
        "ef24d0f898d64363b4c8aea83aa45eaa1ee0c9ef20ede5b9b09f4bd6ea241f37"
    ),
    "fedlu-fb15k-237/R3/client2/valid.txt": (
        "a63c04e16e0806b0f892a9e7c6e069938d31a4245eed48cde22eaffcb9cf27ac"
    ),
    "fedlu-fb15k-237/R5/client0/test.txt": (
        "ae49f5510aa5ec9e4f41af63f31e2b629c8718f47c2f7f9263799651d0bbd065"
    ),
    "fedlu-fb15k-237/R5/client0/train.txt": (
        "e2f21731043a41f742ad2e113b9e5cf5ffbed03ae5b202bc1cd8147dff28f288"
    ),
    "fedlu-fb15k-237/R5/client0/unlearn.txt": (
        "57f048b201cd237fc1bd959a34694f5bd9676da3e905c6c3858f55f843994dc6"
    ),
    "fedlu-fb15k-237/R5/client0/valid.txt": (
        "a220e2738a2514e92d5ee9972bb1871fbdfa0ca6915ca07abc7387527c001a77"
    ),
    "fedlu-fb15k-237/R5/client1/test.txt": (
        "d00c1bc8c307b2afc5577c01b3f18bf72d1c3e0aa4cecfa89afa528b8c04ad7e"
    ),
    "fedlu-fb15k-237/R5/client1/train.txt": (
        "08a8fb0c29a0699a9076aa80e49a0814cfdb7960e5da673b3acbed96b846706d"
    ),
    "fedlu-fb15k-237/R5/client1/unlearn.txt": (
        "cd4378bdadbb13a07439f9e3ee1b5500e5fde80feda047ba0761f7d258c3922b"
    ),
    "fedlu-fb15k-237/R5/client1/valid.txt": (
        "d873bfc0e682c6bd759be71cd8267160f646052f8e206b4449ba23ab7f0d78d3"
    ),
    "fedlu-fb15k-237/R5/client2/test.txt": (
        "750c74383e6e56ce8c9a79dd00ce6d6df9a49bde6b4ba30c51ac7c4b2ae6b56f"
    ),
    "fedlu-fb15k-237/R5/client2/train.txt": (
        "df715c4a39a9042770cd64e0acba386f8b101f02651d25e26133e3f0bd2d49e3"
    ),
    "fedlu-fb15k-237/R5/client2/unlearn.txt": (
        "d945592b0c76c45af60479da3dc5d6c6a6b067e0ab930ce76fc2b055f5fb145c"
    ),
    "fedlu-fb15k-237/R5/client2/valid.txt": (
        "3b9acae53b1307dc8715f7e25f826b9251c618bcd203c08751e1ace9e1a7628c"
    ),
    "fedlu-fb15k-237/R5/client3/test.txt": (
        "9d5f590c58eea896bb2859eefecb3063bad65d85542b3f98c8dc35acad64478c"
    ),
    "fedlu-fb15k-237/R5/client3/train.txt": (
        "02480f208a4b30dd7a19a887dcb017e14941c23d8457eb8abc4e4319b7353f73"
    ),
    "fedlu-fb15k-237/R5/client3/unlearn.txt": (
        "3c2bea4bab23328c39a15288ec27a3d99f9187a0d56f1e857f125f16f6cc9369"
    ),
    "fedlu-fb15k-237/R5/client3/valid.txt": (
        "ec3499f616e4e22e7ab55c5406b61698fcb7091b3fe4d0a5b24bc0a8626e9d55"
    ),
    "fedlu-fb15k-237/R5/client4/test.txt": (
        "901d9dca72c68ede5baec9b437c92a7ac30c6a2868766e0f45369cfc9aefdd14"
    ),
    "fedlu-fb15k-237/R5/client4/train.txt": (
        "343bcf819a0a3dd46067c061f8066848353501765af9202dd66b16687632665e"
    ),
    "fedlu-fb15k-237/R5/client4/unlearn.txt": (
        "505edbe14a11f8093a8c08087de42a6f14ff85938d537af0ae30268e4a9250ab"
    ),
    "fedlu-fb15k-237/R5/client4/valid.txt": (
        "a8ef2f0445bdb76b79f3fd2c7d6cc9d7aebe1db19012d60e751c9b0f8bbd43ae"
    ),
    "kinship/test.txt": (
        "05e5733265761d55be9c05bfaff5a8d0808df46f9c1e9d66cc3f2fe114e43d88"
    ),
    "kinship/train.txt": (
        "738612111a6acf0e39662bde24c7e72a4d1edf20931beea077da367dda689731"
    ),
    "kinship/valid.txt": (
        "c56f8630a583178b1e569f11a64aa535ae1ce0b0912d8b1e24716be2b37f04da"
    ),
    "nations/test.txt": (
        "3971085165b47b6aeaec68058c6d8d98b3005e929db81268410b95ae4db770ab"
    ),
    "nations/train.txt": (
        "0830fa9da8e5bba2ccdaa45b7bdc9130451ba66b09ff2708f35fccaf82473e57"
    ),
    "nations/valid.txt": (
        "2b337a62e51a2f45c283eac98a70d21b7e0e102136be1539b2a52c652a7b0530"
    ),
    "nell-995/entity2id.txt": (
        "d4676c3efc7fd79c3d90bd4168c3f49493f96656afe1030a38fda5ba3f276df0"
    ),
    "nell-995/relation2id.txt": (
        "7acb7297c45d8e9721c3667a75e9ac47d687aa660d9ab6dc46490397d651c126"
    ),
    "nell-995/test2id.txt": (
        "e1f320710c74d3c166d5732066d44378f9d48ce0cd115c66d36681f09553f7dd"
    ),
    "nell-995/train2id.txt": (
        "db5a0d78d1871be461fa54ddd2df20b00122950689a787f9fe88477869b59b0d"
    ),
    "nell-995/valid2id.txt": (
        "c5a037af8b2de6f449ddffce0fc41ae5d7d1e221607a7c1e52ae4082a417db29"
    ),
    "umls/test.txt": (
        "a7eb529a3d2810fcc96341ccc97c625a5e202f8389673aa6bd317eeebbb79014"
    ),
    "umls/train.txt": (
        "873ef4925516b83e7f6f8cc02b4be51d848828710a7f65a956f0ac4a9e452f35"
    ),
    "umls/valid.txt": (
        "025c98f8a4891e2a6582ec5b40ee0d904031edad9c52554522f4b7904820c98e"
    ),
}


def _main() -> None:  # pragma: no cover - maintenance helper
    import sys
    from pathlib import Path

    from fedgraph.data.io import sha256_file

    root = Path(sys.argv[1])
    for rel in sorted(SHA256):
        path = root / rel
        if not path.is_file():
            print(f"missing {rel}")
        elif sha256_file(path) != SHA256[rel]:
            print(f"changed {rel}: {sha256_file(path)}")


if __name__ == "__main__":  # pragma: no cover
    _main()


__all__ = ["SHA256"]
