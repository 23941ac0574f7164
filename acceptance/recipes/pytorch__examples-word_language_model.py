"""pytorch/examples ``word_language_model``: the word-level language model that PyTorch
ships as its example, here as its Transformer (2021: ``nn.TransformerEncoder``, the whole
model saved with ``torch.save(model, f)`` and loaded back with ``torch.load``). Tested at
0fa0589 (2021-10-26). Sparse clone of word_language_model/ without its data's train.txt
(the mirror lacks that large file).

The README's Transformer training command and its ``python generate.py`` command (its
``--model Transformer`` variant is refused by generate.py's own parser, which has no such
option: the script finds the model type in the file), with main.py's and
generate.py's own options: data (Wikitext-2's layout, a tiny corpus), a 16-wide,
one-layer model, short sequences, one epoch, output paths. ``--cuda`` stays, as in the
README: CPU mode runs it on the CPU.
"""

import synthetic
from zoo import Step

REPO = "pytorch/examples"
FIELD = "NLP (language model, Transformer)"
STACKS = ["modern"]
WORKDIR = "word_language_model"


def make_data(root):
    synthetic.text_corpus(root + "/wikitext-2")


STEPS = [
    Step("train", ["python", "main.py", "--cuda", "--epochs", "1", "--model", "Transformer", "--lr", "5",
                   "--data", "{data}/wikitext-2", "--emsize", "16", "--nhid", "16", "--nlayers", "1", "--bptt", "8",
                   "--batch_size", "4", "--log-interval", "10", "--save", "{out}/model.pt"],
         expect="model.pt", expect_log=r"End of training \| test loss"),
    Step("evaluate", ["python", "generate.py", "--cuda", "--data", "{data}/wikitext-2",
                      "--checkpoint", "{out}/model.pt", "--outf", "{out}/generated.txt", "--words", "20"],
         expect="generated.txt", expect_log=r"Generated \d+/20 words"),
]
