"""eriklindernoren/PyTorch-GAN, ``implementations/dcgan`` (DCGAN on MNIST; the collection's
scripts share its style: ``Variable``, ``torch.cuda.FloatTensor if cuda else
torch.FloatTensor`` as a tensor factory, ``.cuda()`` on modules). Tested at 36d3c77
(2021-01-06). Sparse clone without assets/ (the mirror lacks its images).

The README's ``cd implementations/dcgan/; python3 dcgan.py`` with dcgan.py's own options:
one epoch of batches of 16, sampling every 2 batches. The script reads MNIST from
``../../data/mnist`` and writes ``images/`` into its current folder, with no option to move
either, so it runs from ``implementations/dcgan`` under the synthetic data folder, whose
``data/mnist`` holds MNIST's raw files (256 training images). There is no checkpoint,
resume or evaluation command.
"""

import synthetic
from zoo import Step

REPO = "eriklindernoren/PyTorch-GAN"
FIELD = "GAN"
STACKS = ["modern"]
WORKDIR = "implementations/dcgan"
RUN_FROM = "{data}/implementations/dcgan"


def make_data(root):
    synthetic.mnist_raw(root + "/data/mnist", train=256, test=16)


STEPS = [
    Step("train", ["python", "{repo}/dcgan.py", "--n_epochs", "1", "--batch_size", "16", "--n_cpu", "1",
                   "--sample_interval", "2"],
         expect="../data/implementations/dcgan/images/*.png", expect_log=r"\[Epoch 0/1\] \[Batch 15/16\]"),
]
