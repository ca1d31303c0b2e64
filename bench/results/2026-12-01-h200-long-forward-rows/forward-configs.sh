# The forward --config sets of call 1: "kind n m|config|config|..." a line (bf16 x, fp32 γ).
T="threads_per_row"
c() { echo "threads=$1 threads_per_row=$1 vec=8 $2"; }
shapes() {
cat <<L
layernorm 65536 1024|$(c 1024 "registers cluster=4 prefetch shared_weights")|$(c 1024 "registers cluster=4 prefetch")|$(c 512 "registers cluster=8 prefetch min_blocks=2 shared_weights")|$(c 1024 "registers cluster=8 prefetch")|$(c 512 "registers cluster=16 prefetch min_blocks=2")|$(c 1024 "registers cluster=2")
layernorm 131072 512|$(c 1024 "registers cluster=8 prefetch shared_weights")|$(c 1024 "registers cluster=8 prefetch")|$(c 1024 "registers cluster=16 prefetch")|$(c 512 "registers cluster=16 prefetch min_blocks=2")|$(c 1024 "registers cluster=16 prefetch shared_weights")|$(c 1024 "registers cluster=4")
layernorm 262144 256|$(c 1024 "registers cluster=16")|$(c 1024 "registers cluster=16 shared_weights")|$(c 1024 "registers cluster=16 prefetch shared_weights")|$(c 512 "registers cluster=16 min_blocks=2")|$(c 1024 "streamed cluster=16")|$(c 512 "streamed")
layernorm 1048576 64|$(c 1024 "streamed cluster=16")|$(c 512 "streamed cluster=16 min_blocks=2")|$(c 1024 "streamed cluster=8")|$(c 1024 "streamed cluster=4")
rmsnorm 131072 512|$(c 1024 "registers cluster=8 prefetch shared_weights")|$(c 1024 "registers cluster=8 prefetch")|$(c 1024 "registers cluster=16 prefetch")|$(c 512 "registers cluster=16 prefetch min_blocks=2")
rmsnorm 262144 256|$(c 1024 "registers cluster=16")|$(c 1024 "registers cluster=16 prefetch")|$(c 1024 "registers cluster=16 prefetch shared_weights")|$(c 512 "registers cluster=16 min_blocks=2")|$(c 1024 "streamed cluster=16")
rmsnorm 1048576 64|$(c 1024 "streamed cluster=16")|$(c 512 "streamed cluster=16 min_blocks=2")|$(c 1024 "streamed cluster=8")|$(c 1024 "streamed cluster=4")
L
}
