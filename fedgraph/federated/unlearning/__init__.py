r"""FedLU's federated unlearning (forgetting requests, retroactive
interference, passive decay, retraining from scratch)."""
