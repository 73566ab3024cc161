r"""Which options of ``fedgraph train`` each family reads (no torch import).

The KGE models, ``--model rgcn`` and ``--model text`` share one parser, so
every option is accepted by the parser whatever the model. An option that the
chosen family does not read, given with a value other than its default, is
refused with one line naming it (exit status 2, before anything is written)
rather than silently ignored.
"""

from __future__ import annotations

import argparse
from typing import Any

from fedgraph.cli.regime_options import REGIME_OPTIONS

KGE, RGCN, TEXT = "kge", "rgcn", "text"

#: how an error names each family
FAMILY_NAMES = {KGE: "the KGE models", RGCN: "--model rgcn", TEXT: "--model text"}

#: the privacy options (:mod:`fedgraph.cli.privacy_options`)
PRIVACY = (
    "record_uploads",
    "dp_epsilon",
    "dp_delta",
    "dp_clip",
    "secagg",
    "secagg_neighbours",
    "private_alignment",
)

_KGE_ONLY = (
    "model_kwargs",
    "optimizer",
    "num_negatives",
    "selection",
    "proximal_mu",
    "contrastive_mu",
    "evaluate_with",
    "protocol",
    "loss",
    "sampler",
    "sampler_kwargs",
    "per_positive_negatives",
    "unseen",
    "corrupt",
    "no_subsampling",
    "sample_on",
    *PRIVACY,
    *REGIME_OPTIONS,
)
_TEXT_ONLY = (
    "encoder",
    "languages",
    "max_steps",
    "max_length",
    "prefix_tokens",
    "rerank_alpha",
    "rerank_hops",
    "eval_batch_size",
    "transliterate",
    "valid_max_triples",
    "test_max_triples",
)

#: option (its ``argparse`` destination) -> the families that read it; the
#: options every family reads (``--rounds``, ``--lr``, ``--seed``, …) are
#: not listed
FAMILY_OPTIONS: dict[str, frozenset[str]] = {
    **dict.fromkeys(_KGE_ONLY, frozenset({KGE})),
    **dict.fromkeys(_TEXT_ONLY, frozenset({TEXT})),
    **dict.fromkeys(
        ("num_bases", "clients", "num_types", "strategy", "partition_kwargs"),
        frozenset({RGCN}),
    ),
    **dict.fromkeys(("dim",), frozenset({KGE, RGCN})),
    **dict.fromkeys(
        ("batch_size", "gamma", "temperature", "fraction", "eval_every", "patience"),
        frozenset({KGE, TEXT}),
    ),
}


def option_defaults(p: argparse.ArgumentParser) -> dict[str, Any]:
    r"""The parser's default of every option of :data:`FAMILY_OPTIONS`."""
    return {dest: p.get_default(dest) for dest in FAMILY_OPTIONS}


def shown(dest: str, value: Any) -> str:
    r"""The option as typed: ``--secagg``, ``--dim 8``, ``--languages en fr``."""
    flag = "--" + dest.replace("_", "-")
    if isinstance(value, bool):
        return flag
    if isinstance(value, list | tuple):
        return " ".join([flag, *map(str, value)])
    return f"{flag} {value}"


def check_family_options(
    args: argparse.Namespace, family: str, defaults: dict[str, Any]
) -> None:
    r"""Refuses the first option of ``args`` that ``family`` does not read
    and that differs from its parser default (``defaults``, taken before any
    family default is filled in).

    Raises:
        ValueError: one line naming the option, the families that read it
            and ``family``.
    """
    for dest, readers in FAMILY_OPTIONS.items():
        value = getattr(args, dest, None)
        if family in readers or dest not in defaults or value == defaults[dest]:
            continue
        given = shown(dest, value)
        name = FAMILY_NAMES[family] + (" do" if family == KGE else " does")
        if dest in PRIVACY:
            raise ValueError(
                f"`{given}`: the privacy options apply to the federated KGE "
                f"algorithms; {name} not read them (leave them out)"
            )
        owners = " and ".join(
            FAMILY_NAMES[f] for f in (KGE, RGCN, TEXT) if f in readers
        )
        raise ValueError(
            f"`{given}` applies to {owners} only; {name} not read it (leave it out)"
        )


__all__ = [
    "FAMILY_OPTIONS",
    "FAMILY_NAMES",
    "PRIVACY",
    "option_defaults",
    "shown",
    "check_family_options",
]
