"""The floors the host-time benches measure normjit's modules against: Python autograd nodes
that do no norm (bench/host_breakdown.py on the GPU, bench/python_glue_cpu.py on the CPU)."""
import torch


class CloneFunction(torch.autograd.Function):
    """The floor: a Python autograd node that does no norm (one clone each way)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        return x.clone()

    @staticmethod
    def backward(ctx, dy):
        return dy.clone(), None, None


class Clone3Function(torch.autograd.Function):
    """The floor of a node with a norm's gradients: dx a clone of dy, dweight and dbias new
    empty tensors (allocations alone), the parameters saved for their shapes."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(weight, bias)
        return x.clone()

    @staticmethod
    def backward(ctx, dy):
        weight, bias = ctx.saved_tensors
        return dy.clone(), torch.empty_like(weight), torch.empty_like(bias)
