r"""The communication ledger: parameters, ids and bytes actually sent."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from fedgraph.federated.payload import Payload

DIRECTIONS = ("up", "down")
FIELDS = ("params", "ids", "bytes", "messages")


class CommLedger:
    r"""Counts every payload the runtime hands over, per round, per client
    and per direction (``"down"``: server → client, ``"up"``: client →
    server). Counts come from :meth:`Payload.num_params`,
    :meth:`Payload.num_ids` and :meth:`Payload.num_bytes` of the payload
    objects actually sent, so they are exact by construction.

    Round ``0`` holds the one-off registrations.
    """

    def __init__(self) -> None:
        # (round, client, direction) -> {field: int}
        self._rows: dict[tuple[int, int, str], dict[str, int]] = defaultdict(
            lambda: dict.fromkeys(FIELDS, 0)
        )

    def record(
        self, server_round: int, client_id: int, direction: str, payload: Payload
    ) -> None:
        r"""Adds one sent payload to the ledger."""
        if direction not in DIRECTIONS:
            raise ValueError(
                f"`direction` must be one of {DIRECTIONS} (got {direction!r})"
            )
        row = self._rows[(int(server_round), int(client_id), direction)]
        row["params"] += payload.num_params()
        row["ids"] += payload.num_ids()
        row["bytes"] += payload.num_bytes()
        row["messages"] += 1

    def totals(self, *, upto_round: int | None = None) -> dict[str, int]:
        r"""``{"params_up", "params_down", "ids_up", …, "bytes_down",
        "messages_up", "messages_down"}`` summed over rounds ``≤ upto_round``
        (default: all)."""
        out = {f"{f}_{d}": 0 for f in FIELDS for d in DIRECTIONS}
        for (r, _, d), row in self._rows.items():
            if upto_round is not None and r > upto_round:
                continue
            for f in FIELDS:
                out[f"{f}_{d}"] += row[f]
        return out

    def per_round(self) -> dict[int, dict[str, int]]:
        r"""Round → totals of that round."""
        out: dict[int, dict[str, int]] = {}
        for (r, _, d), row in sorted(self._rows.items()):
            tot = out.setdefault(r, {f"{f}_{x}": 0 for f in FIELDS for x in DIRECTIONS})
            for f in FIELDS:
                tot[f"{f}_{d}"] += row[f]
        return out

    def per_client(self) -> dict[int, dict[str, int]]:
        r"""Client → totals over all rounds."""
        out: dict[int, dict[str, int]] = {}
        for (_, c, d), row in sorted(self._rows.items()):
            tot = out.setdefault(c, {f"{f}_{x}": 0 for f in FIELDS for x in DIRECTIONS})
            for f in FIELDS:
                tot[f"{f}_{d}"] += row[f]
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"rows": [[*k, dict(v)] for k, v in sorted(self._rows.items())]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._rows.clear()
        for r, c, d, row in state["rows"]:
            self._rows[(int(r), int(c), str(d))] = {f: int(row[f]) for f in FIELDS}

    def __repr__(self) -> str:
        t = self.totals()
        return (
            f"CommLedger(params_up={t['params_up']}, params_down={t['params_down']}, "
            f"bytes_up={t['bytes_up']}, bytes_down={t['bytes_down']})"
        )


__all__ = ["CommLedger"]
