r"""The text family: FedMKGC (a shared language-model encoder over the
clients' entity texts)."""
