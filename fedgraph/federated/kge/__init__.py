r"""The KGE family of federated algorithms (entity tables shared by global id).

Each module of this package may declare ``ALGORITHMS``, a list of
:class:`~fedgraph.federated.algorithms.Algorithm` entries; the registry
(:func:`fedgraph.federated.algorithms.algorithms`) imports every module
here and collects them. A KGE builder is ``build(fed, kge_settings,
settings) -> (strategy, clients)`` (see :mod:`fedgraph.federated.kge.setup`
for :class:`~fedgraph.federated.kge.setup.KGESettings`,
:func:`~fedgraph.federated.kge.setup.build_clients` and
:func:`~fedgraph.federated.kge.setup.fede_builder`).
"""
