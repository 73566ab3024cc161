r"""The R-GCN family: clients sharing R-GCN bases (FedAvg, FedProx,
FedAlign and their -L variants; separated training as the baseline)."""
