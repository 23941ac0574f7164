"""karpathy/minGPT, a minimal GPT (2022: the ``mingpt`` package, its Trainer with
callbacks, ``CfgNode.merge_from_args`` command-line overrides) and its character-level
language-model project, projects/chargpt. Tested at 37baab7 (2023-01-08; chargpt is of
2022-07).

projects/chargpt/readme.md's run: ``python chargpt.py`` with a user's ``input.txt`` in the
current folder, so the command runs from the synthetic data folder, which holds a small
input.txt. Overrides are the script's own ``--section.key=value`` options: the gpt-nano
model, 16-character blocks, batch 4, no loader workers, 11 iterations (it samples and saves
model.pt at iteration 0), its work_dir under the output folder (quoted: the script reads each
value as a Python literal). The clone is on PYTHONPATH
for what the README's ``pip install -e .`` provides.
"""

import synthetic
from zoo import Step

REPO = "karpathy/minGPT"
FIELD = "NLP (GPT language model)"
STACKS = ["modern"]
RUN_FROM = "{data}"
ENV = {"PYTHONPATH": "{repo}"}


def make_data(root):
    # chargpt samples from the context "O God, O God!" (tiny Shakespeare's), whose characters
    # must be in the data's vocabulary.
    synthetic.text_corpus(root, words=400, names=("input.txt",), first_line="O God, O God!")


STEPS = [
    Step("train", ["python", "{repo}/projects/chargpt/chargpt.py", "--trainer.max_iters=11",
                   "--model.model_type=gpt-nano", "--data.block_size=16", "--trainer.batch_size=4",
                   "--trainer.num_workers=0", "--system.work_dir='{out}/chargpt'"],
         expect="chargpt/model.pt", expect_log=r"iter 10: train loss"),
]
