r"""Local training: the KGE epoch loop and trainer, FedLU's mutual
distillation and retroactive interference (no federation here)."""
