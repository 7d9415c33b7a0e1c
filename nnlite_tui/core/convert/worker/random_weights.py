"""Pretrained weights asked for at construction, offline: the same architecture with random weights.

torchvision builders (`resnet50(weights=...)` -> WeightsEnum.get_state_dict) and model code alike
(`self.load_state_dict(torch.hub.load_state_dict_from_url(URL))`) fetch a checkpoint through
torch.hub.load_state_dict_from_url and hand the dict to Module.load_state_dict. While a model is
constructed:
- load_state_dict_from_url runs as usual (a checkpoint already in torch.hub's cache still loads);
  when it would download (the worker's offline guard raises OfflineDownload) it returns an empty
  dict marked NotDownloaded(url), and the URL is recorded;
- Module.load_state_dict given that marker loads nothing and reports no missing keys, so the module
  keeps the random initialisation its constructor gave it.
The architecture is the one the pretrained path builds (a builder that adapts to `weights`, e.g.
1000 classes or FrozenBatchNorm2d in detection backbones, still does). Code that reads the dict
(`sd["state_dict"]`) gets a KeyError naming the URL, and any other network use (a Hugging Face
download, a socket) still fails as "downloads weights ... nnlite converts offline".
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from nnlite_tui.core.convert.worker.offline import OfflineDownload

# torchvision imports the function into its own namespaces when it is imported.
_TORCHVISION_COPIES = ("torchvision.models._api", "torchvision._internally_replaced_utils", "torchvision.models.utils")


class NotDownloaded(dict):
    """An empty state dict standing for the checkpoint at `url`, which was not downloaded."""

    def __init__(self, url: str):
        super().__init__()
        self.url = url

    def __getitem__(self, key):
        raise KeyError(f"{key!r}: the checkpoint {self.url} was not downloaded (random weights used)")


@dataclass
class Requested:
    """The checkpoints a construction asked for and did not get, and the modules that kept random weights."""

    urls: list[str] = field(default_factory=list)
    kept_random: list[str] = field(default_factory=list)  # module classes whose load was skipped


@contextlib.contextmanager
def random_instead_of_downloads() -> Iterator[Requested]:
    import torch
    import torch.hub

    seen = Requested()
    original_load = torch.hub.load_state_dict_from_url
    original_module_load = torch.nn.Module.load_state_dict

    def load_state_dict_from_url(url, *args, **kwargs):
        try:
            return original_load(url, *args, **kwargs)
        except OfflineDownload:
            seen.urls.append(str(url))
            return NotDownloaded(str(url))

    def load_state_dict(self, state_dict, *args, **kwargs):
        if isinstance(state_dict, NotDownloaded):
            seen.kept_random.append(type(self).__name__)
            return torch.nn.modules.module._IncompatibleKeys([], [])
        return original_module_load(self, state_dict, *args, **kwargs)

    import torch.utils.model_zoo

    targets = [(torch.hub, "load_state_dict_from_url"), (torch.utils.model_zoo, "load_url")]
    for name in _TORCHVISION_COPIES:
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "load_state_dict_from_url"):
            targets.append((module, "load_state_dict_from_url"))
    saved = [(m, a, getattr(m, a)) for m, a in targets]
    for m, a in targets:
        setattr(m, a, load_state_dict_from_url)
    torch.nn.Module.load_state_dict = load_state_dict  # type: ignore[method-assign]  # undone below
    try:
        yield seen
    finally:
        for m, a, v in saved:
            setattr(m, a, v)
        torch.nn.Module.load_state_dict = original_module_load  # type: ignore[method-assign]
