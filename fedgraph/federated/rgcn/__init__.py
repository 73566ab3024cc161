r"""The R-GCN family: clients sharing R-GCN bases (FedAvg, FedProx,
FedAlign and their -L variants; separated training as the baseline)."""

# registers the family's client loss terms (proximal, OT alignment, -L penalty)
from fedgraph.federated.rgcn import terms as _terms  # noqa: E402,F401
