"""monologg/R-BERT, relation classification with BERT (2020; pinned transformers 3.3.1 and
torch 1.6): a ``BertPreTrainedModel`` subclass built with ``from_pretrained(path, config=,
args=)``, transformers' ``AdamW`` (removed in 4.50) with ``get_linear_schedule_with_warmup``,
features cached with ``torch.save``/``torch.load`` (pickled ``InputFeatures`` objects) and the
training arguments saved as ``training_args.bin``. Tested at 254aa50 (2020-10-23).

README: ``python3 main.py --do_train --do_eval``, then ``python3 predict.py --input_file ...
--output_file ... --model_dir ...``. ``--do_eval`` scores with the SemEval Perl scorer in the
clone's eval/ folder, writing its answers there, so the recipe trains without it (logging, and
with it the in-training evaluation, after the last step) and then predicts, which loads the
saved model and arguments back. The model is a tiny BERT made in the data folder with the
stack's transformers (no Hub download); the data is SemEval-2010 Task 8's tab-separated
layout, written here.
"""

import os

from zoo import Step

REPO = "monologg/R-BERT"
FIELD = "NLP (relation classification, transformers BERT)"
STACKS = ["transformers4", "py312"]
ENV = {"PYTHONPATH": "{repo}"}

LABELS = ("Other", "Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Component-Whole(e1,e2)", "Component-Whole(e2,e1)")
WORDS = ("the", "a", "of", "in", "was", "by", "caused", "part", "system", "engine", "car", "storm", "damage",
         "wheel", "fire", "smoke", "house", "door", "river", "flood")


def make_data(root):
    import random

    rng = random.Random(20)
    os.makedirs(root, exist_ok=True)

    def sentence():
        words = [rng.choice(WORDS) for _ in range(12)]
        first, second = sorted(rng.sample(range(1, 11), 2))
        words[first] = "<e1> %s </e1>" % words[first]
        words[second] = "<e2> %s </e2>" % words[second]
        return " ".join(words) + " ."

    for name, count in (("train.tsv", 24), ("test.tsv", 8)):
        with open(os.path.join(root, name), "w", encoding="utf-8") as handle:
            for index in range(count):
                handle.write("%s\t%s\n" % (LABELS[index % len(LABELS)], sentence()))
    with open(os.path.join(root, "label.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(LABELS) + "\n")
    with open(os.path.join(root, "predict.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(sentence() for _ in range(3)) + "\n")
    model = os.path.join(root, "tiny-bert")
    os.makedirs(model)
    with open(os.path.join(model, "vocab.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "$", "#", ".") + WORDS) + "\n")


# A 2-layer BERT of width 32 over that vocabulary, saved as from_pretrained reads it.
TINY_BERT = (
    "import sys; from transformers import BertConfig, BertModel; "
    "size = sum(1 for _ in open(sys.argv[1] + '/vocab.txt')); "
    "BertModel(BertConfig(vocab_size=size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, "
    "intermediate_size=64, max_position_embeddings=64)).save_pretrained(sys.argv[1])"
)

NOTES = (
    "On transformers 5 (py312) both runs pass: RBERT, a model class written for 3.x/4.x, never calls "
    "`post_init()`, which 5.x's `from_pretrained` relies on; `transformers.modeling_utils.PreTrainedModel.post_init` "
    "registers what that call would have, without re-initialising the loaded weights. On transformers 4.57 "
    "(transformers4) both runs pass, with 4.x's `AdamW` restored (4.50 removed it)."
)

STEPS = [
    Step("tiny-model", ["python", "-c", TINY_BERT, "{data}/tiny-bert"], timeout=300),
    Step("train", ["python", "{repo}/main.py", "--do_train", "--data_dir", "{data}", "--model_dir", "{out}/model",
                   "--model_name_or_path", "{data}/tiny-bert", "--max_seq_len", "32", "--train_batch_size", "4",
                   "--max_steps", "4", "--logging_steps", "100", "--save_steps", "4", "--no_cuda"],
         expect="model/training_args.bin", expect_log=r"Saving model checkpoint"),
    Step("predict", ["python", "{repo}/predict.py", "--input_file", "{data}/predict.txt",
                     "--output_file", "{out}/predictions.txt", "--model_dir", "{out}/model", "--no_cuda"],
         expect="predictions.txt", expect_log=r"Prediction Done"),
]
