"""Which torch device a run or an ``llm`` bot may name, checked before seconds go into
loading a model for it. torch is imported inside the check, so the modules that call it
(the ``llm`` bot, found whenever bots are listed) stay light."""

from __future__ import annotations


def check_device(device: str) -> None:
    """Raise ValueError for a string torch does not read as a device, or one this machine lacks."""
    import torch

    try:
        kind = torch.device(device).type
    except RuntimeError:
        raise ValueError(f"{device!r} is not a torch device (e.g. cpu, cuda, cuda:1, mps)") from None
    if kind == "cpu":
        return
    backend = getattr(torch, kind, None)
    if backend is None or not hasattr(backend, "is_available") or not backend.is_available():
        raise ValueError(f"device {device!r} is not available to this torch build")
