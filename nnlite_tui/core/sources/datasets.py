"""The LEMUR datasets nnlite knows: channels, classes and native image size of each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dataset:
    channels: int
    classes: int
    native_hw: tuple[int, int] | None  # None: images vary in size, so only a sizing transform fixes it


# Class counts of the LEMUR datasets (nn-dataset). CelebA and Imagenette images are not one fixed size and the
# loaders' native size for Places365 is not recorded in the tree, so a trial on them whose transform does
# not set a size is treated as "size unknown" and ranked last. The order is the tie-break between
# datasets at equal input size (accuracies of different datasets are not comparable): the common
# benchmarks first.
DATASETS: dict[str, Dataset] = {
    "cifar-10": Dataset(3, 10, (32, 32)),
    "mnist": Dataset(1, 10, (28, 28)),
    "svhn": Dataset(3, 10, (32, 32)),
    "cifar-100": Dataset(3, 100, (32, 32)),
    "imagenette": Dataset(3, 10, None),
    "celeba-gender": Dataset(3, 2, None),
    "places365": Dataset(3, 365, None),
    "coco": Dataset(3, 91, None),  # segmentation/detection categories; captioning reads VOCAB instead
}
