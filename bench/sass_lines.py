#!/usr/bin/env python3
"""Which source line each machine instruction of a kernel comes from, read from a cubin's line tables.

`normjit emit PROBLEM --config C --cubin F.cubin --line-info` writes a cubin whose machine code is
the same bytes as the engine's (NVRTC --generate-line-info adds tables, not code) and whose DWARF
line table (.debug_line) maps each kernel's SASS offsets to lines of the generated source that
`normjit emit PROBLEM --config C` prints. bench/ncu_stalls.py --lines joins a profile's SASS
addresses with it. Standard library only: the GPU machine has no LLVM or pyelftools.

As a command: prints the kernel's (offset, file, line) rows, one per line."""
import argparse
import struct


def elf_sections(blob):
    """{name: (index, sh_type, sh_link, sh_info, bytes)} of a little-endian ELF64 file."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] != 1:
        raise ValueError("not a little-endian ELF64 file (a cubin is one)")
    shoff = struct.unpack_from("<Q", blob, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out = {}
    for index, (name, sh_type, _flags, _addr, offset, size, link, info, _align, _entsize) in enumerate(headers):
        start = names_at + name
        label = blob[start:blob.index(b"\0", start)].decode()
        out[label] = (index, sh_type, link, info, b"" if sh_type == 8 else blob[offset:offset + size])  # 8: NOBITS
    return out


def _leb128(data, at, signed=False):
    """The LEB128 number at data[at], and the offset after it."""
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            if signed and byte & 0x40:
                value -= 1 << shift
            return value, at


def _relocated_sections(sections):
    """{offset in .debug_line: (section name, addend)} of the addresses the linker would fill in."""
    rela = sections.get(".rela.debug_line")
    if not rela:
        return {}
    _, _, symtab_index, _, data = rela
    by_index = {v[0]: (k, v) for k, v in sections.items()}
    symtab = by_index[symtab_index][1][4]
    out = {}
    for at in range(0, len(data), 24):
        r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, at)
        symbol = r_info >> 32
        st_shndx, st_value = struct.unpack_from("<HQ", symtab, symbol * 24 + 6)
        out[r_offset] = (by_index[st_shndx][0] if st_shndx in by_index else None, st_value + r_addend)
    return out


def line_rows(blob):
    """{text section name: [(offset, file, line), ...] in program order} from .debug_line."""
    sections = elf_sections(blob)
    if ".debug_line" not in sections:
        raise ValueError("the cubin has no line tables: write it with `normjit emit ... --cubin F --line-info`")
    data = sections[".debug_line"][4]
    relocated = _relocated_sections(sections)
    rows = {}
    unit = 0
    while unit + 4 <= len(data):
        length = struct.unpack_from("<I", data, unit)[0]
        end = unit + 4 + length
        header_length = struct.unpack_from("<I", data, unit + 6)[0]
        program = unit + 10 + header_length  # the vendor's extra prologue bytes are skipped, not parsed
        min_inst, _default_stmt, line_base, line_range, opcode_base = struct.unpack_from("<BBbBB", data, unit + 10)
        at = unit + 15 + opcode_base - 1
        while data[at]:  # include directories
            at = data.index(b"\0", at) + 1
        at += 1
        files = [None]
        while data[at]:
            stop = data.index(b"\0", at)
            files.append(data[at:stop].decode(errors="replace"))
            at = stop + 1
            for _ in range(3):  # directory, time, length
                _, at = _leb128(data, at)
        at = program
        section, address, file, line = None, 0, 1, 1

        def row():
            rows.setdefault(section, []).append((address, files[file] if file < len(files) else f"file{file}", line))

        while at < end:
            op = data[at]
            at += 1
            if op >= opcode_base:
                adjusted = op - opcode_base
                address += (adjusted // line_range) * min_inst
                line += line_base + adjusted % line_range
                row()
            elif op == 0:
                size, at = _leb128(data, at)
                sub = data[at]
                if sub == 1:  # end of sequence
                    section, address, file, line = None, 0, 1, 1
                elif sub == 2:  # set address, relocated against the kernel's text section
                    address = struct.unpack_from("<Q", data, at + 1)[0]
                    if at + 1 in relocated:
                        section, address = relocated[at + 1][0], relocated[at + 1][1] + address
                at += size
            elif op == 1:
                row()
            elif op == 2:
                step, at = _leb128(data, at)
                address += step * min_inst
            elif op == 3:
                step, at = _leb128(data, at, signed=True)
                line += step
            elif op == 4:
                file, at = _leb128(data, at)
            elif op == 5:
                _, at = _leb128(data, at)
            elif op in (6, 7):
                pass
            elif op == 8:
                address += ((255 - opcode_base) // line_range) * min_inst
            elif op == 9:
                address += struct.unpack_from("<H", data, at)[0]
                at += 2
            else:
                raise ValueError(f"line program opcode {op} at .debug_line+{at - 1} is not DWARF 2's")
        unit = end
    return rows


def kernel_lines(blob, kernel):
    """[(offset, file, line)] of kernel's machine code, by offset; where several rows share an
    offset the last holds (the instruction's line), as readers of line tables take it."""
    rows = line_rows(blob)
    key = ".text." + kernel
    if key not in rows:
        raise ValueError(f"no line rows for {kernel}; the cubin's text sections: "
                         + ", ".join(sorted(k for k in rows if k)))
    last = {}
    for offset, file, line in rows[key]:
        last[offset] = (file, line)
    return [(offset, *last[offset]) for offset in sorted(last)]


def line_at(lines, offset):
    """The (file, line) of the instruction at offset: the row at or before it."""
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        if lines[mid][0] <= offset:
            lo = mid + 1
        else:
            hi = mid
    return lines[lo - 1][1:] if lo else (None, 0)


def text_size(blob, kernel):
    return len(elf_sections(blob).get(".text." + kernel, (0, 0, 0, 0, b""))[4])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubin")
    ap.add_argument("--kernel", default="nj_norm_backward")
    args = ap.parse_args()
    for offset, file, line in kernel_lines(open(args.cubin, "rb").read(), args.kernel):
        print(f"{offset:#06x} {file}:{line}")


if __name__ == "__main__":
    main()
