#!/usr/bin/env python3
# scripts/trace_ptx.py KIND IN OUT LABELS...: adds timestamps to a tric PTX file by hand-picked
# labels, for the per-unit and per-tile accounts in docs/performance.md ("Where stream-K's time
# goes"). An experiment's tool, not the compiler's: the labels are read off the PTX of the build
# at hand (`grep -n '^\$L' FILE`), and a record is written by one thread with plain stores.
#   units IN OUT HEAD KEXIT UEND UCOUNT WSREG PER: a stream-K (`--stream-k`) seed 2 kernel. HEAD is
#     the loop over units' head, KEXIT the K loop's exit, UEND the unit's end (the back edge's
#     block), UCOUNT the unit counter's register, WSREG the register holding the workspace
#     pointer, PER the PTX's `tric.persistent workspace=` bytes. Thread 0 writes globaltimer at the
#     three points, clock64 at them and smid (64 bytes) at workspace + flags + P PER +
#     (ctaid 16 + unit) 64; the header asks for 8 KB more a program so the records fit.
#   grid IN OUT: seed 2's grid kernel. Thread 0 of each program writes globaltimer and clock64 at
#     entry and before `ret`, and smid, at C + M N 2 + ctaid 64 (the harness allocates C bigger).
#   attention IN OUT TILEHEAD KHEAD EPI NEXTBRA: tutorial 06's forward made persistent with a
#     producer: threads 0 and 128 (one a consumer warpgroup) write, per tile, globaltimer at the
#     tile's head, the epilogue's start (EPI) and the tile's end (before NEXTBRA, the branch to the
#     next tile), clock64 at those and at the first and last K-loop head (KHEAD), and smid, at
#     M + 16 MB + ((ctaid 16 + tile) 2 + tid / 128) 128.
#   attention_waits IN OUT TILEHEAD KHEAD EPI NEXTBRA KWAIT: the same, and around the line holding
#     KWAIT (the K loop's full-mbarrier wait, e.g. TRIC_MBAR_WAIT_3:) clock64 before and after: the
#     tile's cycles in that wait, summed and in its first iteration, at record + 80 and + 88.
# scripts/trace_stream_k.py and scripts/trace_attention.py run the results on the GPU.
import re
import sys

DECLS = ("\t.reg .b64 %dbg<12>;\n\t.reg .b64 %dbc<5>;\n\t.reg .b64 %dba;\n\t.reg .b64 %dbo;\n"
         "\t.reg .b32 %dbr<4>;\n\t.reg .b32 %dbt;\n\t.reg .pred %dbp;\n\t.reg .pred %dbq;")


def norm(s):
    return " ".join(s.split())


def after_decls(lines, extra):
    """lines with DECLS (and extra) after the function's .b64 register declaration."""
    out = []
    for line in lines:
        out.append(line)
        if line.strip().startswith(".reg .b64") and "%rd<" in line:
            out.append(DECLS)
            out += extra
    return out


def units(lines, head, kexit, uend, ucount, wsreg, per):
    out = []
    for line in after_decls(lines, []):
        out.append(line)
        s = line.strip()
        if s == head + ":":
            out.append("\tmov.u64 %dbg0, %globaltimer;\n\tmov.u64 %dbg1, %clock64;")
        if s == kexit + ":":
            out.append("\tmov.u64 %dbg2, %globaltimer;\n\tmov.u64 %dbg3, %clock64;")
        if s == uend + ":":
            out.append("""\tmov.u64 %dbg4, %globaltimer;
\tmov.u64 %dbg5, %clock64;
\tmov.u32 %dbr0, %ctaid.x;
\tmov.u32 %dbr1, %nctaid.x;
\tmul.lo.u32 %dbr2, %dbr1, 8;
\tadd.u32 %dbr2, %dbr2, 255;
\tand.b32 %dbr2, %dbr2, -256;
\tcvt.u64.u32 %dbg6, %dbr2;
\tcvt.u64.u32 %dbg7, %dbr1;
\tmul.lo.u64 %dbg7, %dbg7, {per};
\tadd.u64 %dbg6, %dbg6, %dbg7;
\tmad.lo.u32 %dbr3, %dbr0, 16, {u};
\tmul.wide.u32 %dbg8, %dbr3, 64;
\tadd.u64 %dbg6, %dbg6, %dbg8;
\tadd.u64 %dbg6, %dbg6, {ws};
\tmov.u32 %dbr3, %smid;
\tcvt.u64.u32 %dbg9, %dbr3;
\tmov.u32 %dbr3, %tid.x;
\tsetp.eq.u32 %dbp, %dbr3, 0;
\t@%dbp st.global.v2.u64 [%dbg6], {{%dbg0, %dbg2}};
\t@%dbp st.global.v2.u64 [%dbg6+16], {{%dbg4, %dbg1}};
\t@%dbp st.global.v2.u64 [%dbg6+32], {{%dbg3, %dbg5}};
\t@%dbp st.global.u64 [%dbg6+48], %dbg9;""".format(per=int(per), u=ucount, ws=wsreg))
    text = "\n".join(out)
    return re.sub(r"tric.persistent workspace=(\d+)",
                  lambda m: "tric.persistent workspace=%d" % (int(m.group(1)) + 8192), text)


def grid(lines):
    out = []
    for line in after_decls(lines, ["\tmov.u64 %dbg0, %globaltimer;\n\tmov.u64 %dbg1, %clock64;"]):
        if line.strip() == "ret;":
            out.append("""\tmov.u64 %dbg2, %globaltimer;
\tmov.u64 %dbg3, %clock64;
\tld.param.u64 %dbg4, [kernel_matmul_param_2];
\tld.param.u32 %dbr0, [kernel_matmul_param_3];
\tld.param.u32 %dbr1, [kernel_matmul_param_4];
\tmul.wide.u32 %dbg5, %dbr0, %dbr1;
\tshl.b64 %dbg5, %dbg5, 1;
\tadd.u64 %dbg4, %dbg4, %dbg5;
\tmov.u32 %dbr2, %ctaid.x;
\tmul.wide.u32 %dbg5, %dbr2, 64;
\tadd.u64 %dbg4, %dbg4, %dbg5;
\tmov.u32 %dbr3, %smid;
\tcvt.u64.u32 %dbg6, %dbr3;
\tmov.u32 %dbr3, %tid.x;
\tsetp.eq.u32 %dbp, %dbr3, 0;
\t@%dbp st.global.v2.u64 [%dbg4], {%dbg0, %dbg2};
\t@%dbp st.global.v2.u64 [%dbg4+16], {%dbg1, %dbg3};
\t@%dbp st.global.u64 [%dbg4+32], %dbg6;""")
        out.append(line)
    return "\n".join(out)


def attention(lines, tilehead, khead, epi, nextbra, kwait=None):
    out = []
    extra = ["\t.reg .b64 %dbw<4>;", "\t.reg .b32 %dbi;", "\t.reg .pred %dbq2;"] if kwait else []
    for line in after_decls(lines, extra):
        s = line.strip()
        if kwait and kwait in s:
            out.append("\tmov.u64 %dbw0, %clock64;")
            out.append(line)
            out.append("""\tmov.u64 %dbw1, %clock64;
\tsub.u64 %dbw1, %dbw1, %dbw0;
\tadd.u64 %dbw2, %dbw2, %dbw1;
\tsetp.eq.u32 %dbq2, %dbi, 0;
\t@%dbq2 mov.u64 %dbw3, %dbw1;
\tadd.u32 %dbi, %dbi, 1;""")
            continue
        if norm(s) == norm(nextbra):
            out.append("""\tmov.u64 %dbg2, %globaltimer;
\tmov.u64 %dbc4, %clock64;
\tld.param.u64 %dba, [attn_fwd_param_4];
\tadd.u64 %dba, %dba, 16777216;
\tmov.u32 %dbr0, %ctaid.x;
\tmad.lo.u32 %dbr0, %dbr0, 16, %dbt;
\tmov.u32 %dbr1, %tid.x;
\tshr.u32 %dbr2, %dbr1, 7;
\tmad.lo.u32 %dbr0, %dbr0, 2, %dbr2;
\tmul.wide.u32 %dbo, %dbr0, 128;
\tadd.u64 %dba, %dba, %dbo;
\tand.b32 %dbr2, %dbr1, 127;
\tsetp.eq.u32 %dbp, %dbr2, 0;
\tmov.u32 %dbr3, %smid;
\tcvt.u64.u32 %dbo, %dbr3;
\t@%dbp st.global.v2.u64 [%dba], {%dbg0, %dbg1};
\t@%dbp st.global.v2.u64 [%dba+16], {%dbg2, %dbc0};
\t@%dbp st.global.v2.u64 [%dba+32], {%dbc1, %dbc2};
\t@%dbp st.global.v2.u64 [%dba+48], {%dbc3, %dbc4};
\t@%dbp st.global.u64 [%dba+64], %dbo;
\tadd.u32 %dbt, %dbt, 1;""")
            if kwait:
                out.append("\t@%dbp st.global.v2.u64 [%dba+80], {%dbw2, %dbw3};")
        out.append(line)
        if s.startswith("setmaxnreg.inc"):
            out.append("\tmov.u32 %dbt, 0;")
        if s == tilehead + ":":
            out.append("\tmov.u64 %dbg0, %globaltimer;\n\tmov.u64 %dbc0, %clock64;\n"
                       "\tmov.u64 %dbc1, 0;")
            if kwait:
                out.append("\tmov.u64 %dbw2, 0;\n\tmov.u64 %dbw3, 0;\n\tmov.u32 %dbi, 0;")
        if s == khead + ":":
            out.append("\tmov.u64 %dbc2, %clock64;\n\tsetp.eq.u64 %dbq, %dbc1, 0;\n"
                       "\t@%dbq mov.u64 %dbc1, %dbc2;")
        if s == epi + ":":
            out.append("\tmov.u64 %dbg1, %globaltimer;\n\tmov.u64 %dbc3, %clock64;")
    return "\n".join(out)


def main(argv):
    kinds = {"units": (units, 6), "grid": (grid, 0), "attention": (attention, 4),
             "attention_waits": (attention, 5)}
    if len(argv) < 4 or argv[1] not in kinds or len(argv) != 4 + kinds[argv[1]][1]:
        sys.exit("usage: trace_ptx.py units|grid|attention|attention_waits IN OUT LABELS... "
                 "(see the header)")
    fn = kinds[argv[1]][0]
    lines = open(argv[2]).read().split("\n")
    text = fn(lines, *argv[4:])
    if "%dbg" not in text.replace(DECLS, "", 1):
        sys.exit("trace_ptx.py: no label of %s found in %s" % (argv[4:], argv[2]))
    open(argv[3], "w").write(text)


if __name__ == "__main__":
    main(sys.argv)
