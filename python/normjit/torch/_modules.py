"""Drop-in nn.Modules: subclasses of torch.nn.LayerNorm / torch.nn.RMSNorm, so constructor
arguments, parameters, state_dict and isinstance checks are torch's own; only forward differs,
routing through normjit's forward and backward kernels (torch's own where they cannot run, see
_functional).

forward reads the parameters from the module's _parameters dict when it can: self.weight is
found by nn.Module.__getattr__ only after Python's ordinary lookup has failed, which costs
0.6-2 us a parameter (Python 3.12, 3.11: bench/python_glue_cpu.py), more inside a training
step. Only the classes themselves read it so (a subclass may define weight or bias otherwise,
and torch.nn.utils.parametrize makes a subclass), and only while the names are registered
parameters (weight_norm, spectral_norm and parametrize take them out of _parameters and set
them some other way): the attribute lookup otherwise, as before."""
import torch

from ._functional import layer_norm, rms_norm


class LayerNorm(torch.nn.LayerNorm):
    """torch.nn.LayerNorm on normjit's forward and backward."""

    def forward(self, input):
        if type(self) is LayerNorm:
            p = self._parameters
            if "weight" in p and "bias" in p:
                return layer_norm(input, self.normalized_shape, p["weight"], p["bias"], self.eps)
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(torch.nn.RMSNorm):
    """torch.nn.RMSNorm on normjit's forward and backward."""

    def forward(self, x):
        if type(self) is RMSNorm:
            p = self._parameters
            if "weight" in p:
                return rms_norm(x, self.normalized_shape, p["weight"], self.eps)
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)
