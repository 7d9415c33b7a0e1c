"""The second route to full int8: PT2E quantization in PyTorch, then litert-torch's converter.

Used when the recipe route (ai-edge-quantizer on the fp32 .tflite) is beyond the int8 tolerance.
The quantizer's static recipe makes every op int8, LayerNorm/softmax/batch-matmul included, and
those run outside XNNPACK and lose accuracy; PT2E (torchao prepare_pt2e/convert_pt2e with
litert-torch's PT2EQuantizer) quantizes the convolutions and linear layers and keeps the rest
float. It costs a whole second conversion, so it runs only when the first route falls short.
Runs in the conversion worker (torch and litert_torch are imported there).
"""

from __future__ import annotations

import os
from pathlib import Path

ROUTE = "pt2e"
RECIPE = "PT2EQuantizer: symmetric, per-channel weights, static int8 activations (histogram observer)"


def convert_pt2e_int8(target, sample_fed, calibration_fed: list, out_path: str) -> None:
    """Quantize `target` (the module the fp32 conversion converted: NHWC wrapper included) with
    PT2E, calibrated on `calibration_fed` (arrays as the .tflite takes them), and write it."""
    import litert_torch
    import torch
    from litert_torch.quantize.pt2e_quantizer import PT2EQuantizer, get_symmetric_quantization_config
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = PT2EQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_dynamic=False))
    args = (torch.as_tensor(sample_fed),)
    prepared = prepare_pt2e(torch.export.export(target, args).module(), quantizer)
    with torch.no_grad():
        for x in calibration_fed:
            prepared(torch.as_tensor(x))
    quantized = convert_pt2e(prepared, fold_quantize=False)
    edge = litert_torch.convert(quantized, args, quant_config=QuantConfig(pt2e_quantizer=quantizer))
    tmp = out_path + ".part"
    Path(tmp).unlink(missing_ok=True)
    edge.export(tmp)
    os.replace(tmp, out_path)
