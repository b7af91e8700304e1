"""Paths, text surgery and the writing of staged decode_mma.cu variants for ab/main.cu (shared by the stage_*.py)."""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, '..', '..', '..', 'src', 'main', 'cuda'))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..', '..', '..'))


def shipped_kernel():
    """decode_mma.cu as in the working tree."""
    return open(os.path.join(SRC, 'gqa_decode', 'decode_mma.cu')).read()


def destination(arg_index, default_name):
    """sys.argv[arg_index] if given, else .carry/<default_name> under the repository root."""
    return sys.argv[arg_index] if len(sys.argv) > arg_index else os.path.join(ROOT, '.carry', default_name)


def replace(text, old, new):
    """text with its one occurrence of old replaced (stops the staging if there is not exactly one)."""
    if text.count(old) != 1:
        raise SystemExit('staging: expected exactly one match of:\n' + old)
    return text.replace(old, new)


def write_variants(dst, src, here, variants, launchers=None, kernel='f16_d128', main=None):
    """variants: (name, decode_mma.cu text) for a, b, c, d. Each gets its own namespace, kernel names and
    translation unit with a host launcher of its kernel gqa_decode_mma_<kernel> (launch.h's GQA_AB_LAUNCHER, or the
    macro that launchers maps its name to); launch.h, harness.h (with ../../common/dev_harness.h), run.sh and the harness main (main, default this
    folder's main.cu) go beside them, with the kernel's name in the file `kernel` for run.sh."""
    launchers = launchers or {}
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
            '%s(%s_launch, %s_gqa_decode_mma_%s, gqa_mma_%s)\n' % (launchers.get(name, 'GQA_AB_LAUNCHER'), name, name, kernel, name))
    for f in ('launch.h', 'harness.h', 'run.sh'):
        shutil.copy(os.path.join(HERE, f), dst)
    shutil.copy(os.path.join(HERE, '..', '..', 'common', 'dev_harness.h'), dst)
    shutil.copy(main or os.path.join(here, 'main.cu'), os.path.join(dst, 'main.cu'))
    open(os.path.join(dst, 'kernel'), 'w').write(kernel + '\n')
