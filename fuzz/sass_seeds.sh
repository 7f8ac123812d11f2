#!/usr/bin/env bash
# sass_seeds.sh - regenerate fuzz/seeds/sass/ and fuzz/sass.dict from real nvdisasm listings.
#   fuzz/sass_seeds.sh [WORKDIR]
# WORKDIR: the work folder of a `regsweep corpus build` (it holds nv/FAMILY/CONFIG/sm_XX.sass,
# ptxas 13 output disassembled by nvdisasm 11.8 and completed from the cubin); default
# /tmp/mini.work. Without it only the committed fixtures are used.
#
# Why small seeds: one execution costs time linear in the listing (parse, lift, Problem, -plr
# rows, write-back, all under ASan + coverage): a 39 kB / 584-instruction fixture takes ~60 ms, an
# 80-instruction kernel ~4 ms. So the seeds are whole small kernels, and of the big families
# (fa, sgemm, wmma) two fragments: the listing cut at an instruction boundary, every line before
# the cut kept as nvdisasm printed it except the `.size` directive (its end label lies past the
# cut; without it the fragment is a whole listing to the parser). `.cut` ends at the last
# boundary before ~6 kB (branches past it name undefined labels: it exercises the parser and the
# opcode table on HMMA, LDSM, ...); `.closed` at the last boundary before that where every label
# used is defined (it gets through lift and liveness). Seeds (each a real listing or a prefix):
#   calib.sm_{80,90}.<kernel>.sass   each kernel of tests/fixtures/sass/calib.sm_XX.sass alone
#   <family>.<config>.sm_XX.sass     the smallest kernel of each family x arch of WORKDIR
#   <family>.<config>.sm_XX.cut.sass, .closed.sass   fragments of it where it is over 12 kB
# The dictionary: every full opcode spelling (with modifiers) in these listings and in
# tests/fixtures/sass/, every row form of sass/optable.c, and fixed operand/directive spellings.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/mini.work}
OUT=fuzz/seeds/sass
mkdir -p "$OUT"
rm -f "$OUT"/*.sass
python3 - "$WORK" "$OUT" <<'PY'
import glob, os, re, sys
work, out = sys.argv[1], sys.argv[2]
INST = re.compile(r'^\s*/\*[0-9a-f]{4}\*/')
LAB_DEF = re.compile(r'^\s*([.\w$]+):\s*$')
LAB_USE = re.compile(r'`\(([^)]*)\)')
LIMIT = 6000

def split_kernels(text):
    """Header lines (before the first .section .text.) and one block of lines per kernel."""
    lines = text.split('\n')
    head, kernels, cur = [], [], None
    for ln in lines:
        if re.match(r'^\s*//-+ \.text\.', ln):
            cur = [ln]
            kernels.append(cur)
        elif cur is None:
            head.append(ln)
        else:
            cur.append(ln)
    return head, kernels

def fragments(lines):
    """The whole listing if small, else two cuts at instruction boundaries, `.size` dropped: the
    last boundary before ~LIMIT bytes (branches past it name undefined labels: a parser seed),
    and the last boundary before that where every label used is defined (a lift seed)."""
    if sum(len(x) + 1 for x in lines) <= LIMIT * 2:
        return {'': lines}
    keep = [x for x in lines if not re.match(r'^\s*\.size\s', x)]
    size, cuts = 0, []
    for i, x in enumerate(keep):
        size += len(x) + 1
        if INST.match(x):
            cuts.append(i + 1)
        if size > LIMIT:
            break
    res = {'.cut': keep[:cuts[-1]]}
    for c in reversed(cuts):
        part = keep[:c]
        defined = {m.group(1) for m in map(LAB_DEF.match, part) if m}
        used = {u for x in part if INST.match(x) for u in LAB_USE.findall(x) if u.startswith('.L')}
        if used <= defined:
            res['.closed'] = part
            break
    return res

def write(name, lines):
    with open(os.path.join(out, name), 'w') as f:
        f.write('\n'.join(lines).rstrip('\n') + '\n')

srcs = []
for sm in ('80', '90'):
    p = 'tests/fixtures/sass/calib.sm_%s.sass' % sm
    text = open(p).read()
    srcs.append(text)
    head, kernels = split_kernels(text)
    for k in kernels:
        name = re.search(r'\.text\.(\w+)', k[0]).group(1)
        write('calib.sm_%s.%s.sass' % (sm, name), head + k)

fams = sorted(glob.glob(os.path.join(work, 'nv', '*')))
for fam in fams:
    for sm in ('75', '80', '86', '89', '90'):
        cands = sorted(glob.glob(os.path.join(fam, '*', 'sm_%s.sass' % sm)), key=lambda p: (os.path.getsize(p), p))
        if not cands:
            continue
        p = cands[0]
        text = open(p).read()
        srcs.append(text)
        head, kernels = split_kernels(text)
        lines = head + [x for k in kernels for x in k]
        cfg = os.path.basename(os.path.dirname(p))
        for tag, part in fragments(lines).items():
            write('%s.%s.sm_%s%s.sass' % (os.path.basename(fam), cfg, sm, tag), part)

# dictionary
for p in glob.glob('tests/fixtures/sass/**/*.sass', recursive=True):
    srcs.append(open(p).read())
ops = set()
for t in srcs:
    for ln in t.split('\n'):
        m = re.match(r'^\s*/\*[0-9a-f]{4}\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)', ln)
        if m:
            ops.add(m.group(1))
for m in re.finditer(r'^\s*\{"([A-Z0-9_.]+)",\s*(?:"([^"]*)"|([A-Z0-9 ]+(?:"[^"]*")?))', open('sass/optable.c').read(), re.M):
    ops.add(m.group(1))
mods = set()
for o in ops:
    for part in o.split('.')[1:]:
        mods.add('.' + part)
fixed = ['R0', 'R1', 'R2', 'R3', 'R4', 'R254', 'RZ', 'UR4', 'UR5', 'UR63', 'URZ', 'P0', 'P1', 'P6', 'PT',
         'UP0', 'UP6', 'UPT', 'B0', 'B1', 'PR', 'SRZ', 'SR_TID.X', 'SR_CTAID.X', 'SR_LANEID', 'SR_CLOCKLO',
         'c[0x0][0x28]', 'c[0x0][0x160]', 'c[0x0][0x118]', 'cx[UR4][R0]', 'desc[UR4]', '[R2.64]', '[R2.64+0x10]',
         '[UR4]', '[R0+UR4+0x8]', '.reuse', '.64', '.H0_H0', '.H1', '.X4', '-RZ', '!PT', '|R2|', '~R3',
         '0x1f', '0xffffffff', '-0x1', '1', '0', '2.384185791015625e-07', '+INF', '-QNAN', '`(.L_x_0)',
         '`(.L_x_1)', ' ;', ', ', '@P0 ', '@!P0 ', '@UP0 ', '@!PT ', '/*0000*/', '/*0010*/', '/*0020*/',
         '.L_x_0:', '.L_x_1:', '.section\t.text.', ',"ax",@progbits', '.sectioninfo\t@"SHI_REGISTERS=32"',
         '.size', '.type', '@function', ',(.L_x_1 - ', '.headerflags\t@"EF_CUDA_SM80"', 'EF_CUDA_SM75',
         'EF_CUDA_SM86', 'EF_CUDA_SM89', 'EF_CUDA_SM90', '.global', '.align\t128', '.other', '//']
def q(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"').replace('\t', '\\x09') + '"'
with open('fuzz/sass.dict', 'w') as f:
    f.write('# fuzz/sass.dict - SASS tokens for fuzz_sass (-dict=); written by fuzz/sass_seeds.sh\n')
    for s in sorted(ops) + sorted(mods - ops) + fixed:
        f.write(q(s) + '\n')
PY
ls "$OUT" | wc -l
