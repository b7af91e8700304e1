"""Writes staged variants of decode_mma.cu for ab/main.cu (shared by stage.py and stage_issue.py)."""
import os
import shutil


def write_variants(dst, src, here, variants):
    """variants: (name, decode_mma.cu text) for a, b, c, d. Each gets its own namespace, kernel names and
    translation unit with a host launcher of its F16 D=128 kernel; launch.h, main.cu and run.sh go beside them."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    for name, text in variants:
        text = text.replace('namespace gqa_mma', 'namespace gqa_mma_' + name).replace('gqa_mma::', 'gqa_mma_' + name + '::')
        text = text.replace('gqa_decode_mma_', name + '_gqa_decode_mma_')
        os.makedirs(os.path.join(dst, name))
        open(os.path.join(dst, name, 'decode_mma.cu'), 'w').write(text)
        shutil.copy(os.path.join(src, 'common', 'gapfill_types.cuh'), os.path.join(dst, name))
        open(os.path.join(dst, name + '.cu'), 'w').write(
            '#include "decode_mma.cu"\n'
            '#include "launch.h"\n'
            'GQA_AB_LAUNCHER(%s_launch, %s_gqa_decode_mma_f16_d128, gqa_mma_%s)\n' % (name, name, name))
    for f in ('launch.h', 'main.cu', 'run.sh'):
        shutil.copy(os.path.join(here, f), dst)
