"""The speed issue's minimum bytes of one backward pass, for the scripts beside it (peers.py,
dram_traffic.py); `normjit bench` counts the same in C++ (tools/bench.cpp, min_bytes).

x and dy read and dx written (3·M·N elements), the fp32 statistics (LayerNorm mean and rstd,
RMSNorm rstd), γ read and dγ written (and β's dβ for LayerNorm): elem and welem are the bytes
of an element of x and of a weight."""


def min_bytes(kind, m, n, elem, welem):
    if kind == "layernorm":
        return 3 * m * n * elem + 8 * m + 3 * n * welem
    return 3 * m * n * elem + 4 * m + 2 * n * welem
