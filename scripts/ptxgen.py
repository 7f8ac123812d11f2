#!/usr/bin/python3
# ptxgen.py - write small PTX kernels exercising the PTX ISA instruction by instruction (grammar
# table below), compile them with ptxas for each architecture, list them with nvdisasm, cached.
#
# Our own generator (Debian's /usr/bin/python3, no third-party module). The grammar is data: one
# row per PTX instruction syntax line of NVIDIA's PTX ISA reference (9.0, chapter 9.7), with its
# {a|b} alternatives (type, modifier, state space, rounding, comparison, boolean combiner)
# expanded as a cartesian product. Each expansion is one .entry that loads its sources from
# global memory (so ptxas cannot fold them) and stores its results. A variant ptxas rejects for an
# architecture (an error on the variant's lines) is recorded as rejected and dropped, not an
# error: the rest of its file compiles on.
#
#   scripts/ptxgen.py build  [--out DIR] [--arch sm_80,..] [--groups g1,g2|--quick] [-v]
#   scripts/ptxgen.py report [--out DIR] [--arch ..] [--fixtures DIR] [--regsweep BIN] [--unknown]
#   scripts/ptxgen.py check  [--out DIR] [--arch ..] [--groups ..|--quick] [--regsweep BIN]
# (report and check build what is not cached first, unless --no-build)
#   scripts/ptxgen.py list   (groups and how many variants each expands to)
# build writes DIR/<arch>/<group>.<NN>.{ptx,cubin,sass,lrm,rejected} (DIR default build/ptxgen),
# one set per chunk of CHUNK variants; a chunk whose PTX text, ptxas and nvdisasm are unchanged is
# not compiled again (its .key). .lrm: nvdisasm -lrm count of the cubin, the check's reference.
# report prints per architecture the SASS forms seen and how many the table (sass/optable.c)
# knows, then which table rows only the generator's listings reach (not the fixtures' listings).
import argparse
import glob
import hashlib
import itertools
import os
import re
import subprocess
import sys

PTXAS = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
NVDISASM = os.environ.get("NVDISASM", "/opt/nvidia-cuda-11.8/usr/bin/nvdisasm")
ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"]
PTX_VERSION = "9.0"  # CUDA 13.0's ptxas
CHUNK = 40  # entries per PTX file

# Register width of a PTX type (bits); 8-bit types live in 16-bit registers.
WIDTH = {"pred": "p"}
for t in "b8 u8 s8 b16 u16 s16 f16 bf16 e4m3x2 e5m2x2".split():
    WIDTH[t] = 16
for t in "b32 u32 s32 f32 f16x2 bf16x2 u16x2 s16x2 tf32".split():
    WIDTH[t] = 32
for t in "b64 u64 s64 f64".split():
    WIDTH[t] = 64
for t in "b128".split():
    WIDTH[t] = 128

# Type lists of the reference's syntax blocks.
INT = "u16 u32 u64 s16 s32 s64"
INT32_64 = "u32 u64 s32 s64"
BITS = "b16 b32 b64"
CMPI = "eq ne lt le gt ge lo ls hi hs"
CMPF = "eq ne lt le gt ge equ neu ltu leu gtu geu num nan"
BOOL = "and or xor"
RND = "rn rz rm rp"
SCOPE = "cta gpu sys"

# The grammar: (group, syntax, {var: "alternatives"}). In syntax, {x|y|} is a choice (empty
# allowed), $V a variable of the row, each expanded in every combination. Operands: D A B C are
# registers of the width of $T (the row's main type), Dn/An/Bn/Cn of n bits (16, 32, 64), P/P2 a
# predicate written, Q/Q2 a predicate read; [G] a global address, [S] a shared one (32-bit), [L] a
# local one, [K] a constant one, [F] a generic one; $U's width for DU AU BU CU.
# Sections of PTX ISA 9.0 (chapter 9.7) in the comments.
GRAMMAR = [
    # 9.7.1 integer arithmetic
    ("iadd", "add.$T D, A, B", {"T": INT + " u16x2 s16x2"}),
    ("iadd", "add.sat.s32 D32, A32, B32", {}),
    ("iadd", "sub.$T D, A, B", {"T": INT}),
    ("iadd", "sub.sat.s32 D32, A32, B32", {}),
    ("imul", "mul.{lo|hi}.$T D, A, B", {"T": INT}),
    ("imul", "mul.wide.$T DW, A, B", {"T": "u16 u32 s16 s32"}),
    ("imul", "mad.{lo|hi}.$T D, A, B, C", {"T": INT}),
    ("imul", "mad.hi.sat.s32 D32, A32, B32, C32", {}),
    ("imul", "mad.wide.$T DW, A, B, CW", {"T": "u16 u32 s16 s32"}),
    ("imul", "mul24.{lo|hi}.$T D, A, B", {"T": "u32 s32"}),
    ("imul", "mad24.{lo|hi}.$T D, A, B, C", {"T": "u32 s32"}),
    ("idiv", "div.$T D, A, B", {"T": INT}),
    ("idiv", "rem.$T D, A, B", {"T": INT}),
    ("iminmax", "{abs|neg}.$T D, A", {"T": "s16 s32 s64"}),
    ("iminmax", "{min|max}.$T D, A, B", {"T": INT + " u16x2 s16x2"}),
    ("iminmax", "{min|max}.relu.$T D, A, B", {"T": "s32 s16x2"}),
    ("ibits", "{popc|clz}.$T D32, A", {"T": "b32 b64"}),
    ("ibits", "brev.$T D, A", {"T": "b32 b64"}),
    ("ibits", "bfind{|.shiftamt}.$T D32, A", {"T": INT32_64}),
    ("ibits", "fns.b32 D32, A32, B32, 3", {}),
    ("ibits", "bfe.$T D, A, B32, C32", {"T": INT32_64}),
    ("ibits", "bfi.$T D, A, B, C32, 5", {"T": "b32 b64"}),
    ("ibits", "szext.{clamp|wrap}.$T D, A, B", {"T": "u32 s32"}),
    ("ibits", "bmsk.{clamp|wrap}.b32 D32, A32, B32", {}),
    ("idp", "dp4a.$T.$U D32, A32, B32, C32", {"T": "u32 s32", "U": "u32 s32"}),
    ("idp", "dp2a.{lo|hi}.$T.$U D32, A32, B32, C32", {"T": "u32 s32", "U": "u32 s32"}),
    # 9.7.2 extended precision
    ("icarry", "add.cc.$T D, A, B; addc{|.cc}.$T D, A, B", {"T": "u32 s32 u64 s64"}),
    ("icarry", "sub.cc.$T D, A, B; subc{|.cc}.$T D, A, B", {"T": "u32 s32 u64 s64"}),
    ("icarry", "mad.{lo|hi}.cc.$T D, A, B, C; madc.{lo|hi}{|.cc}.$T D, A, B, C", {"T": "u32 s32 u64 s64"}),
    # 9.7.3 floating point
    ("fadd", "{add|sub|mul}{|.$R}{|.ftz}{|.sat}.f32 D32, A32, B32", {"R": RND}),
    ("fadd", "{add|sub|mul}{|.$R}.f64 D64, A64, B64", {"R": RND}),
    ("fadd", "fma.$R{|.ftz}{|.sat}.f32 D32, A32, B32, C32", {"R": RND}),
    ("fadd", "fma.$R.f64 D64, A64, B64, C64", {"R": RND}),
    ("fadd", "mad{|.ftz}{|.sat}.f32 D32, A32, B32, C32", {}),
    ("fadd", "{min|max}{|.ftz}{|.NaN}.f32 D32, A32, B32", {}),
    ("fadd", "{min|max}.f64 D64, A64, B64", {}),
    ("fadd", "{abs|neg}{|.ftz}.f32 D32, A32", {}),
    ("fadd", "{abs|neg}.f64 D64, A64", {}),
    ("fadd", "testp.{finite|infinite|number|notanumber|normal|subnormal}.$T P, A", {"T": "f32 f64"}),
    ("fadd", "copysign.$T D, A, B", {"T": "f32 f64"}),
    ("fdiv", "div.{approx|full}{|.ftz}.f32 D32, A32, B32", {}),
    ("fdiv", "div.$R{|.ftz}.f32 D32, A32, B32", {"R": RND}),
    ("fdiv", "div.$R.f64 D64, A64, B64", {"R": RND}),
    ("fdiv", "rcp.approx{|.ftz}.f32 D32, A32", {}),
    ("fdiv", "rcp.$R{|.ftz}.f32 D32, A32", {"R": RND}),
    ("fdiv", "rcp.$R.f64 D64, A64", {"R": RND}),
    ("fdiv", "rcp.approx.ftz.f64 D64, A64", {}),
    ("fdiv", "sqrt.approx{|.ftz}.f32 D32, A32", {}),
    ("fdiv", "sqrt.$R{|.ftz}.f32 D32, A32", {"R": RND}),
    ("fdiv", "sqrt.$R.f64 D64, A64", {"R": RND}),
    ("fdiv", "rsqrt.approx{|.ftz}.f32 D32, A32", {}),
    ("fdiv", "rsqrt.approx.{|ftz.}f64 D64, A64", {}),
    ("fmufu", "{sin|cos|lg2|ex2}.approx{|.ftz}.f32 D32, A32", {}),
    ("fmufu", "tanh.approx.f32 D32, A32", {}),
    ("fmufu", "ex2.approx{|.ftz}.$T D, A", {"T": "f16 f16x2 bf16 bf16x2"}),
    ("fmufu", "tanh.approx.$T D, A", {"T": "f16 f16x2 bf16 bf16x2"}),
    # 9.7.4 half precision
    ("half", "{add|sub|mul}{|.rn}{|.ftz}{|.sat}.$T D, A, B", {"T": "f16 f16x2"}),
    ("half", "{add|sub|mul}{|.rn}.$T D, A, B", {"T": "bf16 bf16x2"}),
    ("half", "fma.rn{|.ftz}{|.sat}.$T D, A, B, C", {"T": "f16 f16x2"}),
    ("half", "fma.rn{|.relu}.$T D, A, B, C", {"T": "bf16 bf16x2"}),
    ("half", "fma.rn.ftz.relu.$T D, A, B, C", {"T": "f16 f16x2"}),
    ("half", "{neg|abs}{|.ftz}.$T D, A", {"T": "f16 f16x2"}),
    ("half", "{neg|abs}.$T D, A", {"T": "bf16 bf16x2"}),
    ("half", "{min|max}{|.ftz}{|.NaN}.$T D, A, B", {"T": "f16 f16x2"}),
    ("half", "{min|max}{|.NaN}.$T D, A, B", {"T": "bf16 bf16x2"}),
    # 9.7.5 comparison and selection
    ("setp", "setp.$C.$T P, A, B", {"C": CMPI, "T": "u16 u32 u64 s16 s32 s64 b16 b32 b64"}),
    ("setp", "setp.$C.$B.$T P|P2, A, B, Q", {"C": "eq ne lt ge", "B": BOOL, "T": "u32 s32 u64 s64"}),
    ("setp", "setp.$C{|.ftz}.$T P, A, B", {"C": CMPF, "T": "f32"}),
    ("setp", "setp.$C.$T P, A, B", {"C": CMPF, "T": "f64"}),
    ("setp", "setp.$C.$B{|.ftz}.$T P|P2, A, B, Q", {"C": "eq ne ltu gtu num nan", "B": BOOL, "T": "f32"}),
    ("setp", "setp.$C.$B.$T P|P2, A, B, Q", {"C": "eq ne ltu num", "B": BOOL, "T": "f64"}),
    ("setp", "setp.$C{|.ftz}.$T P, A, B", {"C": "eq ne lt le gt ge equ neu ltu leu gtu geu num nan", "T": "f16 bf16"}),
    ("setp", "setp.$C{|.ftz}.$T P|P2, A, B", {"C": "eq ne lt le gt ge equ neu ltu leu gtu geu num nan", "T": "f16x2 bf16x2"}),
    ("setp", "setp.$C.$B.$T P|P2, A, B, Q", {"C": "eq lt gtu nan", "B": BOOL, "T": "f16 f16x2 bf16 bf16x2"}),
    ("set", "set.$C.$D.$T D32, A, B", {"C": CMPI, "D": "u32 s32 f32", "T": "u32 s32 u64 s64"}),
    ("set", "set.$C.$B.$D.$T D32, A, B, Q", {"C": "eq lt", "B": BOOL, "D": "u32 f32", "T": "s32"}),
    ("set", "set.$C{|.ftz}.$D.$T D32, A, B", {"C": CMPF, "D": "u32 f32", "T": "f32"}),
    ("set", "set.$C.$D.$T D32, A, B", {"C": "eq lt equ nan", "D": "u32 f32", "T": "f64"}),
    ("set", "set.$C{|.ftz}.$D.$T D, A, B", {"C": CMPF, "D": "f16 u16 s16", "T": "f16"}),
    ("set", "set.$C{|.ftz}.$D.$T D, A, B", {"C": "eq lt ge equ ltu nan num", "D": "f16x2 u32 s32", "T": "f16x2"}),
    ("set", "set.$C.$D.$T D, A, B", {"C": "eq lt ge equ ltu nan num", "D": "bf16 u16 s16", "T": "bf16"}),
    ("set", "set.$C.$D.$T D, A, B", {"C": "eq lt ge equ ltu nan num", "D": "bf16x2 u32 s32", "T": "bf16x2"}),
    ("set", "set.$C.$B{|.ftz}.$D.$T D, A, B, Q", {"C": "eq lt", "B": BOOL, "D": "f16x2 u32", "T": "f16x2"}),
    ("set", "set.$C.$B.$D.$T D, A, B, Q", {"C": "eq lt", "B": BOOL, "D": "bf16x2 u32", "T": "bf16x2"}),
    ("selp", "selp.$T D, A, B, Q", {"T": "b16 b32 b64 f32 f64"}),
    ("selp", "slct{|.ftz}.$T.$U D, A, B, CU", {"T": "b32 b64", "U": "s32 f32"}),
    # 9.7.6 logic and shift
    ("logic", "{and|or|xor}.$T D, A, B", {"T": "pred b16 b32 b64"}),
    ("logic", "{not|cnot}.$T D, A", {"T": "b16 b32 b64"}),
    ("logic", "not.pred P, Q", {}),
    ("logic", "lop3.b32 D32, A32, B32, C32, 0x96", {}),
    ("logic", "lop3.$B.b32 D32|P, A32, B32, C32, 0x96, Q", {"B": "and or"}),
    ("logic", "shf.{l|r}{|.clamp|.wrap}.b32 D32, A32, B32, C32", {}),
    ("logic", "{shl|shr}.$T D, A, B32", {"T": BITS}),
    ("logic", "shr.$T D, A, B32", {"T": "u16 u32 u64 s16 s32 s64"}),
    ("logic", "prmt.b32{|.f4e|.b4e|.rc8|.ecl|.ecr|.rc16} D32, A32, B32, C32", {}),
    # 9.7.9 conversion and data movement
    ("cvt", "cvt.$T.$U DT, AU", {"T": "u8 u16 u32 u64 s8 s16 s32 s64", "U": "u8 u16 u32 u64 s8 s16 s32 s64"}),
    ("cvt", "cvt.sat.$T.$U DT, AU", {"T": "u8 u16 u32 s8 s16 s32", "U": "u16 u32 u64 s16 s32 s64"}),
    ("cvt", "cvt.$R{|.ftz}{|.sat}.f32.f32 D32, A32", {"R": "rni rzi rmi rpi"}),
    ("cvt", "cvt.$R.f64.f64 D64, A64", {"R": "rni rzi rmi rpi"}),
    ("cvt", "cvt{|.$R}{|.sat}.$T.$U DT, AU", {"R": RND, "T": "f16 f32 f64", "U": "u8 u16 u32 u64 s8 s16 s32 s64"}),
    ("cvt", "cvt.$R{|.sat}.$T.$U DT, AU", {"R": "rni rzi rmi rpi", "T": "u8 u16 u32 u64 s8 s16 s32 s64", "U": "f16 f32 f64"}),
    ("cvt", "cvt{|.ftz}.$T.f32 DT, A32", {"T": "u32 s32 u64 s64"}),
    ("cvt", "cvt{|.$R}{|.ftz}{|.sat}.$T.$U DT, AU", {"R": RND, "T": "f16 f32", "U": "f16 f32 f64"}),
    ("cvt", "cvt{|.$R}{|.sat}.f64.$U D64, AU", {"R": RND, "U": "f16 f32"}),
    ("cvt", "cvt.{rn|rz}{|.relu}{|.satfinite}.$T.f32 D16, A32", {"T": "f16 bf16"}),
    ("cvt", "cvt.{rn|rz}{|.relu}{|.satfinite}.$T.f32 D32, A32, B32", {"T": "f16x2 bf16x2"}),
    ("cvt", "cvt.rna{|.satfinite}.tf32.f32 D32, A32", {}),
    ("cvt", "cvt.{rn|rz}{|.relu}{|.satfinite}.tf32.f32 D32, A32", {}),
    ("cvt", "cvt.rn.satfinite{|.relu}.$T.f32 D16, A32, B32", {"T": "e4m3x2 e5m2x2"}),
    ("cvt", "cvt.rn{|.relu}.f16x2.$T D32, A16", {"T": "e4m3x2 e5m2x2"}),
    ("cvt", "cvt.rn.satfinite{|.relu}.$T.f16x2 D16, A32", {"T": "e4m3x2 e5m2x2"}),
    ("cvt", "cvt{|.rn|.rz|.rm|.rp}{|.relu}{|.satfinite}.bf16.$U D16, AU", {"U": "f16 f64 u32 s32"}),
    ("cvt", "cvt.f32.bf16 D32, A16", {}),
    ("cvt", "cvt.{rni|rzi|rmi|rpi}.$T.bf16 D, A16", {"T": "u32 s32 u16 s16"}),
    ("cvt", "cvt.frnd2{|.relu}{|.satfinite}.f16.f32 D16, A32", {}),
    ("mov", "mov.$T D, A", {"T": "b16 b32 b64"}),
    ("mov", "mov.b32 D32, {A16,B16}; mov.b64 D64, {A32,B32}", {}),
    ("mov", "mov.b32 {D16,E16}, A32; mov.b64 {D32,E32}, A64", {}),
    ("mov", "mov.u32 D32, %{tid.x|ntid.x|ctaid.x|laneid|warpid|nwarpid|smid|nsmid|gridid|clock|lanemask_eq|lanemask_lt|dynamic_smem_size|total_smem_size|globaltimer_lo}", {}),
    ("mov", "mov.u64 D64, %{clock64|globaltimer|gridid}", {}),
    ("mov", "cvta.{global|shared|local|const}.u64 D64, A64; cvta.to.{global|shared|local|const}.u64 E64, A64", {}),
    ("mov", "isspacep.{global|shared|local|const|param} P, A64", {}),
    # 9.7.9.x memory
    ("ld", "ld.global{|.ca|.cg|.cs|.lu|.cv|.nc}.$T D, [G]", {"T": "u8 s8 u16 s16 b32 b64"}),
    ("ld", "ld.global{|.nc}.v2.$T {D,E}, [G]", {"T": "b16 b32 b64"}),
    ("ld", "ld.global{|.nc}.v4.$T {D,E,F,H}, [G]", {"T": "b16 b32"}),
    ("ld", "ld{|.volatile|.relaxed.gpu|.acquire.gpu|.relaxed.sys|.acquire.cta}.global.$T D, [G]", {"T": "b32 b64"}),
    ("ld", "ld.global.L1::{evict_normal|evict_first|evict_last|no_allocate}.$T D, [G]", {"T": "b32"}),
    ("ld", "ld.global.L2::{64B|128B|256B}.$T D, [G]", {"T": "b32"}),
    ("ld", "ld.shared{|.volatile}.$T D, [S]", {"T": "u8 s8 u16 s16 b32 b64"}),
    ("ld", "ld.shared.v2.$T {D,E}, [S]; ld.shared.v4.b32 {D32,E32,F32,H32}, [S]", {"T": "b32 b64"}),
    ("ld", "ld.local.$T D, [L]", {"T": "u8 s8 u16 s16 b32 b64"}),
    ("ld", "ld.local.v4.b32 {D32,E32,F32,H32}, [L]", {}),
    ("ld", "ld.const.$T D, [K]", {"T": "u8 s8 u16 s16 b32 b64"}),
    ("ld", "ld{|.volatile}.$T D, [F]", {"T": "u8 s8 u16 s16 b32 b64"}),
    ("ld", "ld.v4.b32 {D32,E32,F32,H32}, [F]; ld.v2.b64 {D64,E64}, [F]", {}),
    ("ld", "ldu.global.$T D, [G]", {"T": "b32 b64"}),
    ("st", "st.global{|.wb|.cg|.cs|.wt}.$T [G], A", {"T": "b8 b16 b32 b64"}),
    ("st", "st.global.v2.$T [G], {A,B}; st.global.v4.b32 [G], {A32,B32,C32,A32}", {"T": "b16 b32 b64"}),
    ("st", "st{|.volatile|.relaxed.gpu|.release.gpu|.relaxed.sys|.release.cta}.global.$T [G], A", {"T": "b32 b64"}),
    ("st", "st.shared{|.volatile}.$T [S], A", {"T": "b8 b16 b32 b64"}),
    ("st", "st.shared.v4.b32 [S], {A32,B32,C32,A32}; st.shared.v2.b64 [S], {A64,B64}", {}),
    ("st", "st.local.$T [L], A", {"T": "b8 b16 b32 b64"}),
    ("st", "st{|.volatile}.$T [F], A", {"T": "b8 b16 b32 b64"}),
    ("st", "st.v4.b32 [F], {A32,B32,C32,A32}", {}),
    ("atom", "atom{|.global}{|.$S}.$O.$T D, [GF], B", {"S": SCOPE, "O": "and or xor exch add inc dec min max", "T": "b32 u32 s32"}),
    ("atom", "atom{|.global}.$O.$T D, [GF], B", {"O": "and or xor exch add min max", "T": "b64 u64 s64"}),
    ("atom", "atom{|.global}{|.relaxed|.acquire|.release|.acq_rel}.gpu.add.$T D, [GF], B", {"T": "u32 f32"}),
    ("atom", "atom{|.global}.add{|.noftz}.$T D, [GF], B", {"T": "f32 f64 f16 f16x2 bf16 bf16x2"}),
    ("atom", "atom{|.global}.cas.$T D, [GF], B, C", {"T": "b32 b64 b16"}),
    ("atom", "atom.shared.$O.$T D, [S], B", {"O": "and or xor exch add inc dec min max", "T": "b32 u32 s32"}),
    ("atom", "atom.shared.$O.$T D, [S], B", {"O": "and or xor exch add min max", "T": "b64 u64 s64"}),
    ("atom", "atom.shared.add{|.noftz}.$T D, [S], B", {"T": "f32 f64 f16x2"}),
    ("atom", "atom.shared.cas.$T D, [S], B, C", {"T": "b32 b64"}),
    ("red", "red{|.global}{|.$S}.$O.$T [GF], B", {"S": SCOPE, "O": "and or xor add inc dec min max", "T": "b32 u32 s32"}),
    ("red", "red{|.global}.$O.$T [GF], B", {"O": "and or xor add min max", "T": "b64 u64 s64"}),
    ("red", "red{|.global}.add{|.noftz}.$T [GF], B", {"T": "f32 f64 f16 f16x2 bf16 bf16x2"}),
    ("red", "red.shared.$O.$T [S], B", {"O": "and or xor add inc dec min max", "T": "u32 s32 u64"}),
    ("cache", "prefetch{|.global|.local}.{L1|L2} [GF]; prefetchu.L1 [F]", {}),
    ("cache", "discard.global.L2 [G], 128; applypriority.global.L2::evict_normal [G], 128", {}),
    ("cache", "createpolicy.fractional.L2::{evict_last|evict_first|evict_unchanged}.b64 D64, 1.0", {}),
    ("cache", "cp.async.{ca|cg}.shared.global [S], [G], 16; cp.async.commit_group; cp.async.wait_group 0", {}),
    ("cache", "cp.async.ca.shared.global [S], [G], {4|8}; cp.async.wait_all", {}),
    ("cache", "cp.async.ca.shared.global [S], [G], 4, A32; cp.async.mbarrier.arrive.shared.b64 [S]", {}),
    # 9.7.12 synchronisation, warp level
    ("sync", "bar.sync 0; bar.warp.sync -1; membar.{cta|gl|sys}; fence.{sc|acq_rel}.{cta|gpu|sys}", {}),
    ("sync", "bar.red.popc.u32 D32, 1, Q; bar.red.{and|or}.pred P, 2, Q", {}),
    ("sync", "barrier.sync{|.aligned} 3, A32; bar.arrive 4, 64", {}),
    ("sync", "vote.sync.{all|any|uni}.pred P, Q, -1; vote.sync.ballot.b32 D32, Q, A32", {}),
    ("sync", "match.{any|all}.sync.$T D32, A, -1", {"T": "b32 b64"}),
    ("sync", "match.all.sync.$T D32|P, A, B32", {"T": "b32 b64"}),
    ("sync", "shfl.sync.{up|down|bfly|idx}.b32 D32|P, A32, B32, 31, -1", {}),
    ("sync", "redux.sync.{add|min|max}.$T D32, A32, -1", {"T": "u32 s32"}),
    ("sync", "redux.sync.{and|or|xor}.b32 D32, A32, B32", {}),
    ("sync", "activemask.b32 D32; nanosleep.u32 A32; trap; brkpt", {}),
    ("sync", "mbarrier.init.shared.b64 [S], A32; mbarrier.arrive.shared.b64 D64, [S]; mbarrier.test_wait.shared.b64 P, [S], A64", {}),
    ("sync", "mbarrier.arrive_drop.shared.b64 D64, [S]; mbarrier.pending_count.b64 D32, A64; mbarrier.inval.shared.b64 [S]", {}),
    ("sync", "mbarrier.try_wait{|.parity}.shared.b64 P, [S], A64", {}),
    ("sync", "griddepcontrol.{launch_dependents|wait}", {}),
    ("sync", "elect.sync D32|P, -1", {}),
    ("sync", "stmatrix.sync.aligned.m8n8.x1{|.trans}.shared.b16 [S], {A32}", {}),
    ("sync", "stmatrix.sync.aligned.m8n8.x2{|.trans}.shared.b16 [S], {A32,B32}", {}),
    ("sync", "stmatrix.sync.aligned.m8n8.x4{|.trans}.shared.b16 [S], {A32,B32,C32,A32}", {}),
    ("sync", "setmaxnreg.{inc|dec}.sync.aligned.u32 240", {}),
    ("sync", "mapa.shared::cluster.u32 D32, A32, B32; getctarank.u64 D32, A64", {}),
    # 9.7.13 warp matrix (mma.sync, ldmatrix, movmatrix)
    ("mma", "ldmatrix.sync.aligned.m8n8.x1{|.trans}.shared.b16 {D32}, [S]", {}),
    ("mma", "ldmatrix.sync.aligned.m8n8.x2{|.trans}.shared.b16 {D32,E32}, [S]", {}),
    ("mma", "ldmatrix.sync.aligned.m8n8.x4{|.trans}.shared.b16 {D32,E32,F32,H32}, [S]", {}),
    ("mma", "movmatrix.sync.aligned.m8n8.trans.b16 D32, A32", {}),
    ("mma", "mma.sync.aligned.m16n8k16.row.col.f32.$T.$T.f32 {D32,E32,F32,H32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32,C32,A32}", {"T": "f16 bf16"}),
    ("mma", "mma.sync.aligned.m16n8k8.row.col.f32.$T.$T.f32 {D32,E32,F32,H32}, {A32,B32}, {C32}, {A32,B32,C32,A32}", {"T": "f16 bf16"}),
    ("mma", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {D32,E32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32}", {}),
    ("mma", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {D32,E32,F32,H32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32,C32,A32}", {}),
    ("mma", "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {D32,E32,F32,H32}, {A32,B32}, {C32}, {A32,B32,C32,A32}", {}),
    ("mma", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {D64,E64}, {A64}, {B64}, {C64,A64}", {}),
    ("mma", "mma.sync.aligned.m16n8k{16|32}.row.col{|.satfinite}.s32.$T.$T.s32 {D32,E32,F32,H32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32,C32,A32}", {"T": "s8 u8"}),
    ("mma", "mma.sync.aligned.m8n8k16.row.col{|.satfinite}.s32.$T.$T.s32 {D32,E32}, {A32}, {B32}, {C32,A32}", {"T": "s8 u8"}),
    ("mma", "mma.sync.aligned.m16n8k32.row.col.f32.$T.$T.f32 {D32,E32,F32,H32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32,C32,A32}", {"T": "e4m3 e5m2"}),
]

GRAMMAR += [
    # 9.7.1.x sad, 9.7.9.x cvt.pack
    ("iadd", "sad.$T D, A, B, C", {"T": INT}),
    ("cvt", "cvt.pack.sat.$T.s32.b32 D32, A32, B32, C32", {"T": "s8 u8 s16 u16"}),
    ("cvt", "cvt.pack.sat.$T.s32.b32 D32, A32, B32", {"T": "s16 u16"}),
    # 9.7.16 video instructions: scalar (with the secondary operation) and SIMD
    ("video", "{vadd|vsub|vabsdiff|vmin|vmax}.$T.$U.$U{|.sat} D32, A32, B32", {"T": "u32 s32", "U": "u32 s32"}),
    ("video", "{vadd|vsub|vabsdiff|vmin|vmax}.u32.u32.u32.{add|min|max} D32, A32, B32, C32", {}),
    ("video", "{vshl|vshr}.u32.u32.u32.{clamp|wrap} D32, A32, B32", {}),
    ("video", "vmad.$T.$U.$U{|.sat}{|.shr7|.shr15} D32, A32, B32, C32", {"T": "u32 s32", "U": "u32 s32"}),
    ("video", "vset.$T.$T.{eq|ne|lt|le|gt|ge} D32, A32, B32", {"T": "u32 s32"}),
    ("video", "{vadd2|vsub2|vavrg2|vabsdiff2|vmin2|vmax2}.$T.$T.$T{|.sat} D32, A32, B32, C32", {"T": "u32 s32"}),
    ("video", "{vadd4|vsub4|vavrg4|vabsdiff4|vmin4|vmax4}.$T.$T.$T{|.sat} D32, A32, B32, C32", {"T": "u32 s32"}),
    ("video", "{vadd2|vabsdiff2}.$T.$T.$T.add D32, A32, B32, C32; {vadd4|vabsdiff4}.$T.$T.$T.add D32, A32, B32, C32", {"T": "u32 s32"}),
    ("video", "{vset2|vset4}.$T.$T.{eq|lt|ge}{|.add} D32, A32, B32, C32", {"T": "u32 s32"}),
    # 9.7.8 control flow: a jump table, calls, the stack
    ("flow", "and.b32 %r19, A32, 3; brx.idx{|.uni} %r19, jt; jt: .branchtargets l0, l1, l2, l3; l0: mov.b32 D32, 1; bra.uni e; l1: mov.b32 D32, B32; bra.uni e; l2: mov.b32 D32, C32; bra.uni e; l3: mov.b32 D32, 7; e: pmevent 1", {}),
    ("flow", "alloca{|.align.16}.u64 D64, A64; stacksave.u64 E64; stackrestore.u64 E64", {}),
    ("flow", "alloca.u32 D32, A32", {}),
    ("flow", "@Q exit; mov.b32 D32, A32", {}),
    # 9.7.12 sm_90: clusters, asynchronous copies and barriers
    ("cluster", "barrier.cluster.arrive{|.relaxed|.release}{|.aligned}; barrier.cluster.wait{|.acquire}{|.aligned}", {}),
    ("cluster", "mov.u32 D32, %{clusterid.x|nclusterid.x|cluster_ctaid.x|cluster_nctaid.x|cluster_ctarank|cluster_nctarank|is_explicit_cluster}", {}),
    ("cluster", "ld.shared::cluster.$T D, [S]; st.shared::cluster.$T [S], A", {"T": "b32 b64"}),
    ("cluster", "mapa.u64 D64, A64, B32; ld.shared::cluster.b32 E32, [D64]", {}),
    ("cluster", "fence.proxy.{alias|async|async.global|async.shared::cta|async.shared::cluster}", {}),
    ("cluster", "fence.{mbarrier_init.release.cluster|acq_rel.cluster|sc.cluster}", {}),
    ("cluster", "mbarrier.expect_tx{|.relaxed.cta}.shared.b64 [S], 64; mbarrier.arrive.expect_tx.shared.b64 D64, [S], 64", {}),
    ("cluster", "mbarrier.complete_tx.shared.b64 [S], 64; mbarrier.arrive.release.cluster.shared::cluster.b64 _, [S]", {}),
    ("cluster", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [S], [G], 64, [S]; cp.async.bulk.global.shared::cta.bulk_group [G], [S], 64; cp.async.bulk.commit_group; cp.async.bulk.wait_group{|.read} 0", {}),
    ("cluster", "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.$T [G], [S], 64", {"T": "u32 s32 u64 f32"}),
    ("cluster", "cp.async.bulk.prefetch.L2.global [G], 64", {}),
    ("cluster", "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.{add|min|max}.u32 [S], A32, [S]", {}),
    ("cluster", "st.async.shared::cluster.mbarrier::complete_tx::bytes.$T [S], A, [S]", {"T": "b32 b64"}),
    ("cluster", "multimem.ld_reduce.relaxed.gpu.global.add.$T D, [F]; multimem.st.relaxed.gpu.global.$T [F], A; multimem.red.relaxed.gpu.global.add.$T [F], A", {"T": "u32 f32"}),
    ("cluster", "ld{|.relaxed.cluster|.acquire.cluster}.global.b32 D32, [G]; atom.cluster.global.add.u32 E32, [G], A32", {}),
    # 9.7.14 warp matrix, wmma
    ("wmma", "wmma.load.{a|b}.sync.aligned.{row|col}.m16n16k16.global.f16 {D32,E32,F32,H32,D32,E32,F32,H32}, [G], 16", {}),
    ("wmma", "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f16 {D32,E32,F32,H32,D32,E32,F32,H32}, {A32,B32,C32,A32,B32,C32,A32,B32}, {A32,B32,C32,A32,B32,C32,A32,B32}, {A32,B32,C32,A32,B32,C32,A32,B32}", {}),
    ("wmma", "wmma.store.d.sync.aligned.{row|col}.m16n16k16.{global|shared}.f32 [GS], {A32,B32,C32,A32,B32,C32,A32,B32}, 16", {}),
    ("wmma", "wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {D32,E32,F32,H32,D32,E32,F32,H32}, [G], 16", {}),
    ("wmma", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {D32,E32,F32,H32,D32,E32,F32,H32}, {A32,B32}, {A32,B32}, {A32,B32,C32,A32,B32,C32,A32,B32}", {}),
    ("wmma", "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {D32,E32}, {A32}, {B32}, {C32,A32}", {}),
    ("wmma", "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.{xor|and}.popc {D32,E32,F32,H32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32,C32,A32}", {}),
    ("wmma", "mma.sync.aligned.m16n8k{16|32|64}.row.col{|.satfinite}.s32.$T.$U.s32 {D32,E32,F32,H32}, {A32,B32,C32,A32}, {B32,C32}, {A32,B32,C32,A32}", {"T": "s8 u8 s4 u4", "U": "s8 u8 s4 u4"}),
    # 9.7.10 textures and surfaces (bindless: the handle a 64-bit register)
    ("tex", "tex.1d.v4.$T.f32 {D32,E32,F32,H32}, [A64, {A32}]", {"T": "f32 s32 u32"}),
    ("tex", "tex.{2d|a1d}.v4.$T.f32 {D32,E32,F32,H32}, [A64, {A32,B32}]", {"T": "f32 s32 u32"}),
    ("tex", "tex.{3d|a2d|cube}.v4.$T.f32 {D32,E32,F32,H32}, [A64, {A32,B32,C32,A32}]", {"T": "f32 s32 u32"}),
    ("tex", "tex.level.2d.v4.f32.f32 {D32,E32,F32,H32}, [A64, {A32,B32}], C32; tex.grad.2d.v4.f32.f32 {D32,E32,F32,H32}, [A64, {A32,B32}], {C32,A32}, {B32,C32}", {}),
    ("tex", "tld4.{r|g|b|a}.2d.v4.f32.f32 {D32,E32,F32,H32}, [A64, {A32,B32}]", {}),
    ("tex", "txq.{width|height|depth|num_mipmap_levels|num_samples}.b32 D32, [A64]", {}),
    ("tex", "suld.b.1d.$T.{trap|clamp|zero} D, [A64, {A32}]", {"T": "b8 b16 b32 b64"}),
    ("tex", "suld.b.2d.$T.{trap|clamp|zero} D, [A64, {A32,B32}]", {"T": "b8 b16 b32 b64"}),
    ("tex", "suld.b.3d.$T.{trap|clamp|zero} D, [A64, {A32,B32,C32,A32}]", {"T": "b8 b16 b32 b64"}),
    ("tex", "suld.b.2d.v4.b32.trap {D32,E32,F32,H32}, [A64, {A32,B32}]", {}),
    ("tex", "sust.b.1d.$T.{trap|clamp|zero} [A64, {A32}], B", {"T": "b8 b16 b32 b64"}),
    ("tex", "sust.b.2d.$T.{trap|clamp|zero} [A64, {A32,B32}], B", {"T": "b8 b16 b32 b64"}),
    ("tex", "sust.b.3d.$T.{trap|clamp|zero} [A64, {A32,B32,C32,A32}], B", {"T": "b8 b16 b32 b64"}),
    ("tex", "sust.p.2d.v4.b32.trap [A64, {A32,B32}], {A32,B32,C32,A32}", {}),
    ("tex", "sured.b.{add|min|max|and|or}.2d.$T.trap [A64, {A32,B32}], B", {"T": "u32 s32 b32 u64"}),
    ("tex", "suq.{width|height|depth|channel_data_type|channel_order|array_size|memory_layout}.b32 D32, [A64]", {}),
    ("tex", "istypep.{texref|samplerref|surfref}.b64 D64, A64; isspacep.global P, A64", {}),
]

# The test's subset (seconds to build): every QUICK_STRIDE-th variant of the grammar, as one group
# "quick", leaving out the groups whose variants call CUDA's internal helpers (division, sqrt:
# live counts at those calls are sass/live.c's open item of issue 42, not the table's).
QUICK_STRIDE = 17
QUICK_SKIP = ("idiv", "fdiv")

# SASS forms the table leaves out on purpose, with why: a function with one is refused by name, and
# check counts it apart ("left out"), not as a failure.
LEFT_OUT = {
    "UP2UR": "reads the uniform predicate file UPR whole (as P2R reads PR): sass_parse.c has no UPR operand",
    "UR2UP": "writes the uniform predicate file UPR whole (as R2P): sass_parse.c has no UPR operand",
}


def expand(syntax, vars_):
    """Every instance of a syntax line: variables first, then {a|b} choices left to right."""
    names = sorted(vars_)
    out = []
    for vals in itertools.product(*[vars_[n].split() for n in names]):
        s = syntax
        env = dict(zip(names, vals))
        for n in names:
            s = s.replace("$" + n, env[n])
        parts = re.split(r"\{([^{}]*\|[^{}]*)\}", s)  # odd indices: choices
        choices = [p.split("|") if i % 2 else [p] for i, p in enumerate(parts)]
        for c in itertools.product(*choices):
            out.append(("".join(c), env))
    return out


def reg_width(tok, env):
    """Width of an operand token D A B C E F H (suffix: 16/32/64, W = twice $T, T/U = that var's)."""
    m = re.fullmatch(r"([DABCEFH])(16|32|64|W|T|U)?", tok)
    if not m:
        return None, None
    kind, suf = m.group(1), m.group(2)
    t = env.get("T")
    if suf in (None, "T"):
        w = WIDTH.get(t, 32) if t else 32
    elif suf == "U":
        w = WIDTH[env["U"]]
    elif suf == "W":
        w = 2 * WIDTH[t]
    else:
        w = int(suf)
    return kind, w


SRC = {"A": 1, "B": 2, "C": 3}
OFF = {16: 64, 32: 96, 64: 128, 128: 160}


def render(text, env, out_regs):
    """PTX of one variant: operands replaced by registers; records the results to store."""
    def op(m):
        tok = m.group(0)
        if tok in ("P", "P2"):
            out_regs.append(("p", "%p" + ("5" if tok == "P" else "6")))
            return out_regs[-1][1]
        if tok in ("Q", "Q2"):
            return "%p" + ("1" if tok == "Q" else "2")
        if tok == "[GS]" and "shared" in text:
            return "[%r20]"
        if tok in ("[G]", "[S]", "[L]", "[K]", "[F]", "[GF]", "[GS]"):
            return {"[G]": "[%rd9+256]", "[S]": "[%r20]", "[L]": "[%rd11]", "[K]": "[cbank+16]",
                    "[F]": "[%rd10]", "[GF]": "[%rd9+256]", "[GS]": "[%rd9+256]"}[tok]
        kind, w = reg_width(tok, env)
        if w == "p" or kind is None:
            return tok
        pre = {16: "%h", 32: "%r", 64: "%rd", 128: "%q"}[w]
        if kind in SRC:
            return pre + str(SRC[kind])
        n = {"D": 5, "E": 6, "F": 7, "H": 8}[kind]
        out_regs.append((w, pre + str(n)))
        return pre + str(n)

    return re.sub(r"\[G[FS]?\]|\[[SLKF]\]|\bP2?\b|\bQ2?\b|\b[DABCEFH](?:16|32|64|W|T|U)?\b", op, text)


PRELUDE = """\t.reg .pred %p<8>;\n\t.reg .b16 %h<10>;\n\t.reg .b32 %r<24>;\n\t.reg .b64 %rd<16>;
\t.local .align 16 .b8 lbuf[64];
\tld.param.u64 %rd10, [pin];
\tcvta.to.global.u64 %rd9, %rd10;
\tmov.u32 %r9, %tid.x;
\tmul.wide.u32 %rd12, %r9, 4;
\tadd.u64 %rd9, %rd9, %rd12;
\tld.global.b32 %r1, [%rd9]; ld.global.b32 %r2, [%rd9+4]; ld.global.b32 %r3, [%rd9+8];
\tld.global.b64 %rd1, [%rd9+16]; ld.global.b64 %rd2, [%rd9+24]; ld.global.b64 %rd3, [%rd9+32];
\tld.global.b16 %h1, [%rd9+40]; ld.global.b16 %h2, [%rd9+42]; ld.global.b16 %h3, [%rd9+44];
\tsetp.ne.b32 %p1, %r1, 0; setp.ne.b32 %p2, %r2, 0;
\tand.b32 %r19, %r1, 60; mov.u32 %r20, sbuf; add.u32 %r20, %r20, %r19;
\tmov.u64 %rd11, lbuf; cvt.u64.u32 %rd13, %r19; add.u64 %rd11, %rd11, %rd13;
"""


def entry(name, text, env):
    out = []
    body = render(text, env, out).split(";")
    lines = [".visible .entry %s(.param .u64 pin)\n{\n" % name, PRELUDE]
    lines += ["\t%s;\n" % s.strip() for s in body if s.strip()]
    seen = set()
    for w, r in out:
        if r in seen:
            continue
        seen.add(r)
        if w == "p":
            lines.append("\tselp.u32 %%r21, 1, 0, %s; st.global.b32 [%%rd9+200], %%r21;\n" % r)
        else:
            lines.append("\tst.global.b%d [%%rd9+%d], %s;\n" % (w, OFF[w] + 8 * int(r[-1]), r))
    lines.append("\tret;\n}\n")
    return "".join(lines)


def group_ptx(group, arch):
    """A group's PTX for an architecture, in chunks of CHUNK entries (a variant nvdisasm cannot
    list costs a recompile of its chunk only): [(text, [(entry name, PTX line, first and last line
    of the entry)])]."""
    head = ".version %s\n.target %s\n.address_size 64\n" % (PTX_VERSION, arch)
    head += ".shared .align 16 .b8 sbuf[256];\n.const .align 16 .b8 cbank[256];\n\n"
    entries = []
    n = 0
    for g, syntax, vars_ in GRAMMAR:
        if g != group and (group != "quick" or g in QUICK_SKIP):
            continue
        for inst, env in expand(syntax, vars_):
            n += 1
            if group == "quick" and (n - 1) % QUICK_STRIDE:
                continue
            name = "g_%s_%d" % (group, len(entries))
            entries.append((name, inst, entry(name, inst, env)))
    chunks = []
    for i in range(0, len(entries), CHUNK):
        text, variants, line = head, [], head.count("\n") + 1
        for name, inst, e in entries[i:i + CHUNK]:
            k = e.count("\n")
            variants.append((name, inst, line, line + k - 1))
            text += e
            line += k
        chunks.append((text, variants))
    return chunks


def tool_key():
    h = hashlib.sha256()
    for t in (PTXAS, NVDISASM):
        st = os.stat(t)
        h.update(("%s %d %d" % (t, st.st_size, int(st.st_mtime))).encode())
    return h.hexdigest()[:16]


def build_one(out, group, arch, regsweep, verbose):
    """Compile a group for an arch, chunk by chunk (cached): (accepted, rejected, all cached)."""
    d = os.path.join(out, arch)
    os.makedirs(d, exist_ok=True)
    acc = rej = 0
    cached = True
    for i, (text, variants) in enumerate(group_ptx(group, arch)):
        a, r, c = build_chunk(os.path.join(d, "%s.%02d" % (group, i)), text, variants, arch, regsweep)
        acc, rej, cached = acc + a, rej + r, cached and c
    if verbose:
        print("ptxgen: %s %s: %d accepted, %d rejected" % (arch, group, acc, rej), file=sys.stderr)
    return acc, rej, cached


def listings(out, arch, group):
    """The listings of a group's chunks."""
    return sorted(glob.glob(os.path.join(out, arch, glob.escape(group) + ".[0-9][0-9].sass")))


def build_chunk(base, text, variants, arch, regsweep):
    """Compile one chunk (cached by its PTX text and the tools): (accepted, rejected, cached)."""
    group = os.path.basename(base)
    key = hashlib.sha256((text + tool_key()).encode()).hexdigest()
    if os.path.exists(base + ".key") and open(base + ".key").read() == key and os.path.exists(base + ".sass"):
        rej = [l for l in open(base + ".rejected").read().splitlines() if l]
        return len(variants) - len(rej), len(rej), True
    rejected = {}
    live = list(variants)
    while True:
        src = text
        if rejected:  # drop the rejected entries' lines, keep the rest
            keep = text.split("\n")
            for name, inst, a, b in variants:
                if name in rejected:
                    for i in range(a - 1, b):
                        keep[i] = ""
            src = "\n".join(keep)
        with open(base + ".ptx", "w") as f:
            f.write(src)
        r = subprocess.run([PTXAS, "-arch=" + arch, base + ".ptx", "-o", base + ".cubin"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            # nvdisasm 11.8 must list it too: a function it cannot read is that variant's refusal
            r = subprocess.run([regsweep, "corpus", "disasm", base + ".cubin", "--nvdisasm", NVDISASM, "-o",
                                base + ".sass"], capture_output=True, text=True)
            if r.returncode == 0:
                break
            m = re.search(r"function (g_\w+) address", r.stderr)
            v = [v for v in live if m and v[0] == m.group(1)]
            if not v:
                sys.exit("ptxgen: %s %s: corpus disasm failed: %s" % (arch, group, r.stderr))
            rejected[v[0][0]] = (v[0][1], "nvdisasm 11.8: " + r.stderr.strip().split(": ", 2)[-1][:160])
            live = [x for x in live if x[0] not in rejected]
            if not live:
                break
            continue
        bad = set()
        for m in re.finditer(r"line (\d+); error\s*:\s*(.*)", r.stderr):
            ln = int(m.group(1))
            for name, inst, a, b in live:
                if a <= ln <= b:
                    bad.add(name)
                    rejected.setdefault(name, (inst, m.group(2).strip()))
        if not bad:  # an error no line names: compile the entries one by one
            for v in live:
                one = head_of(text) + "\n".join(text.split("\n")[v[2] - 1: v[3]]) + "\n"
                with open(base + ".one.ptx", "w") as f:
                    f.write(one)
                r1 = subprocess.run([PTXAS, "-arch=" + arch, base + ".one.ptx", "-o", "/dev/null"],
                                    capture_output=True, text=True)
                if r1.returncode != 0:
                    bad.add(v[0])
                    rejected[v[0]] = (v[1], (r1.stderr.strip().splitlines() or ["?"])[-1])
            if os.path.exists(base + ".one.ptx"):
                os.remove(base + ".one.ptx")
            if not bad:
                sys.exit("ptxgen: %s %s: ptxas failed and no variant alone fails:\n%s" % (arch, group, r.stderr))
        live = [v for v in live if v[0] not in rejected]
        if not live:
            break
    with open(base + ".rejected", "w") as f:
        for name, (inst, why) in sorted(rejected.items(), key=lambda x: int(x[0].rsplit("_", 1)[1])):
            f.write("%s\t%s\t%s\n" % (name, inst, why))
    if not live:
        open(base + ".sass", "w").close()
        open(base + ".lrm", "w").close()
    else:  # nvdisasm's own live counts per instruction (-lrm count), the check of our widths
        r = subprocess.run([regsweep, "corpus", "disasm", base + ".cubin", "--rewrite", base + ".old.cubin"],
                           capture_output=True, text=True)
        r = subprocess.run([NVDISASM, "-c", "-lrm", "count", base + ".old.cubin"], capture_output=True, text=True) \
            if r.returncode == 0 else r
        if r.returncode != 0:
            sys.exit("ptxgen: %s %s: nvdisasm -lrm count failed: %s" % (arch, group, r.stderr))
        with open(base + ".lrm", "w") as f:
            f.write(r.stdout)
        os.remove(base + ".old.cubin")
    with open(base + ".key", "w") as f:
        f.write(key)
    return len(live), len(rejected), False


def head_of(text):
    return text[: text.index(".visible .entry")]


def lrm_table(text):
    """nvdisasm -lrm count: {function: {address: {file: count}}} (a blank count is 0); the files
    are the columns its header names (GPR PRED UGPR UPRED, only those the listing uses)."""
    out, fn, names = {}, None, []
    for l in text.splitlines():
        m = re.match(r"^\s*// \|((?:\s*[A-Z]+\s*\|)+)\s*$", l)
        if m:
            names = [c.strip() for c in m.group(1).split("|") if c.strip()]
            continue
        m = re.match(r"^\.text\.(\S+):", l)
        if m:
            fn = m.group(1)
            out[fn] = {}
            continue
        m = re.match(r"^\s+/\*([0-9a-f]+)\*/.*// \|(.*)\|\s*$", l)
        if m and fn:
            cols = [c.strip() for c in m.group(2).split("|")]
            out[fn][int(m.group(1), 16)] = {n: int(c) if c else 0 for n, c in zip(names, cols)}
    return out


def check_one(regsweep, base, verbose):
    """Pinned identical and live counts equal nvdisasm's for one listing: (functions, identical,
    functions compared, functions equal, rows compared, rows equal, [lines saying what differs])."""
    msgs = []
    text = open(base + ".sass").read()
    nfun = len(re.findall(r"\.section\t\.text\.", text))
    r = subprocess.run([regsweep, "regalloc", base + ".sass", "--pinned"], capture_output=True, text=True)
    ident = len(re.findall(r": identical \(", r.stdout))
    left = 0
    for m in re.finditer(r"refused \S+ /\*[0-9a-f]+\*/: form ([A-Z0-9_.]+)", r.stdout + r.stderr):
        base_ = m.group(1).split(".")[0]
        if m.group(1) in LEFT_OUT or base_ in LEFT_OUT or ".".join(m.group(1).split(".")[:3]) in LEFT_OUT:
            left += 1
    if ident + left != nfun:
        msgs += [l for l in (r.stdout + r.stderr).splitlines() if "identical" not in l and l.strip()][:8]
    nfun -= left
    r = subprocess.run([regsweep, "inspect", base + ".sass", "--live"], capture_output=True, text=True)
    ours, fn = {}, None
    for l in r.stdout.splitlines():
        m = re.match(r"^# (\S+): address", l)
        if m:
            fn = m.group(1)
            ours[fn] = {}
        elif fn and re.match(r"^[0-9a-f]+ ", l):
            v = l.split()
            ours[fn][int(v[0], 16)] = tuple(int(x) for x in v[1:])
    if r.returncode != 0:
        msgs += [l for l in r.stderr.splitlines()][:8]
    theirs = lrm_table(open(base + ".lrm").read())
    insn = {}
    fn = None
    for l in text.splitlines():
        m = re.match(r"^\.text\.(\S+):", l)
        if m:
            fn = m.group(1)
        m = re.match(r"^\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;", l)
        if m and fn:
            insn[(fn, int(m.group(1), 16))] = m.group(2)
    fc = fe = rc = re_ = 0
    for fn, rows in theirs.items():
        if fn not in ours:
            continue
        fc += 1
        same, first = True, None
        prev = None
        for addr in sorted(rows):
            if addr not in ours[fn]:
                continue
            rc += 1
            files = ("GPR", "PRED", "UGPR", "UPRED")
            mine = tuple(ours[fn][addr][i] for i, f in enumerate(files) if f in rows[addr])
            want = tuple(rows[addr][f] for f in files if f in rows[addr])
            if mine == want:
                re_ += 1
            elif same:
                same = False
                first = "%s /*%04x*/ '%s' (after '%s'): ours %s, nvdisasm %s" % (
                    fn, addr, insn.get((fn, addr), "?"), insn.get((fn, prev), "?"), mine, want)
            prev = addr
        fe += same
        if first:
            msgs.append("live differs: " + first)
    return nfun, ident, fc, fe, rc, re_, msgs, left


def groups():
    """The grammar's groups, in order."""
    seen = []
    for g, _, _ in GRAMMAR:
        if g not in seen:
            seen.append(g)
    return seen


def forms_of(regsweep, files, unused=False):
    """regsweep corpus forms over listings: (summary line, {form/ops: row}, set of rows used)."""
    if not files:
        return "", {}, set()
    args = [regsweep, "corpus", "forms"] + files + (["--unused"] if unused else [])
    r = subprocess.run(args, capture_output=True, text=True)
    rows, unused_rows, summary = {}, set(), ""
    for l in r.stdout.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+(\d+)\s+(.*)$", l)
        if m and m.group(1) != "form":  # the row's form, or why none (words)
            row = m.group(4).strip()
            rows[(m.group(1), int(m.group(2)))] = None if " " in row else row
        elif l.startswith("unused row "):
            unused_rows.add(l[len("unused row "):].strip())
        elif l.startswith("forms:"):
            summary = l
    return summary, rows, unused_rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["build", "report", "check", "list"])
    ap.add_argument("--out", default="build/ptxgen")
    ap.add_argument("--arch", default=",".join(ARCHS))
    ap.add_argument("--groups", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--regsweep", default="build/regsweep")
    ap.add_argument("--fixtures", default="tests/fixtures")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--unknown", action="store_true", help="report: list the unknown forms")
    ap.add_argument("--no-build", action="store_true", help="report, check: the listings in --out as they are")
    a = ap.parse_args()
    archs = a.arch.split(",")
    gs = a.groups.split(",") if a.groups else (["quick"] if a.quick else groups())
    if a.cmd == "list":
        for g in groups():
            n = sum(len(expand(s, v)) for gg, s, v in GRAMMAR if gg == g)
            print("%-10s %5d variants" % (g, n))
        return
    for t in (PTXAS, NVDISASM, a.regsweep):
        if not os.access(t, os.X_OK):
            print("ptxgen: not executable: %s" % t, file=sys.stderr)
            sys.exit(77)
    tot = {}
    for arch in archs:
        for g in gs:
            if a.no_build:  # what the listings there hold
                fs = listings(a.out, arch, g)
                acc = sum(open(f).read().count(".section\t.text.") for f in fs)
                rej = sum(len(open(f[:-5] + ".rejected").read().splitlines()) for f in fs)
                cached = True
            else:
                acc, rej, cached = build_one(a.out, g, arch, a.regsweep, a.v)
            t = tot.setdefault(arch, [0, 0, 0])
            t[0] += acc
            t[1] += rej
            t[2] += cached
    if a.cmd == "build":
        for arch in archs:
            print("ptxgen %s: %d variants accepted by ptxas, %d rejected, %d of %d groups cached" %
                  (arch, tot[arch][0], tot[arch][1], tot[arch][2], len(gs)))
        return
    if a.cmd == "check":
        bad = 0
        for arch in archs:
            n = ident = lrows = lsame = lfun = lfun_ok = left = 0
            for f in [f for g in gs for f in listings(a.out, arch, g)]:
                base = f[:-len(".sass")]
                if os.path.getsize(f) == 0:
                    continue
                g = os.path.basename(base)
                c = check_one(a.regsweep, base, a.v)
                n += c[0]; ident += c[1]; lfun += c[2]; lfun_ok += c[3]; lrows += c[4]; lsame += c[5]; left += c[7]
                for l in c[6]:
                    print("ptxgen check %s %s: %s" % (arch, g, l))
            ok = ident == n and lfun_ok == lfun
            bad += not ok
            print("ptxgen check %s: %d functions (%d more refused by a form left out), pinned identical %d/%d; live "
                  "counts = nvdisasm -lrm count on %d/%d functions (%d/%d rows)%s" %
                  (arch, n, left, ident, n, lfun_ok, lfun, lsame, lrows, "" if ok else " FAIL"))
        sys.exit(1 if bad else 0)
    # report: per arch forms seen / known; rows only the generator reaches
    gen_used = set()
    for arch in archs:
        files = [f for g in gs for f in listings(a.out, arch, g) if os.path.getsize(f) > 0]
        summary, rows, _ = forms_of(a.regsweep, files)
        m = re.search(r"(\d+) forms seen, (\d+) known, (\d+) unknown \((\d+) instructions\)", summary)
        seen, known = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        unknown = sorted("%s/%d" % k for k, v in rows.items() if v is None)
        if a.unknown:
            print("\n".join("unknown %s %s" % (arch, u) for u in unknown))
        print("ptxgen %s: %d variants accepted, %d rejected; SASS forms %d seen, %d known, %d unknown%s" %
              (arch, tot[arch][0], tot[arch][1], seen, known, seen - known,
               (" (--unknown lists them)") if unknown else ""))
        gen_used |= {v for v in rows.values() if v}
    fix = []
    for root, _, fs in os.walk(a.fixtures):
        fix += [os.path.join(root, f) for f in fs if f.endswith(".sass")]
    _, frows, _ = forms_of(a.regsweep, sorted(fix))
    fix_used = {v for v in frows.values() if v}
    only = sorted(gen_used - fix_used)
    print("ptxgen: table rows reached: generator %d, fixtures (%d listings) %d, both %d, only the generator %d%s" %
          (len(gen_used), len(fix), len(fix_used), len(gen_used & fix_used), len(only),
           (": " + " ".join(only)) if only and a.v else ""))


if __name__ == "__main__":
    main()
