"""facebookresearch/dino, self-supervised ViT (2021: torch.cuda.amp GradScaler with
--use_fp16 true by default, ``torch.distributed.launch``, nccl, its own
init_distributed_mode). Sparse clone without .github/ (the mirror lacks its images).

README's training command, restart (training again into the same --output_dir resumes
from its checkpoint.pth) and k-NN evaluation; overrides are main_dino.py's and
eval_knn.py's own options: vit_tiny, a 256-d head, 2 local crops, batch 2, 1 + 1 epochs.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/dino"
FIELD = "self-supervised"
STACKS = ["modern"]
CHECKPOINT = "train/checkpoint.pth"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=8, size=32)


LAUNCH = ["python", "-m", "torch.distributed.launch", "--nproc_per_node=1", "--master_port={port}"]
TRAIN = LAUNCH + ["main_dino.py", "--arch", "vit_tiny", "--data_path", "{data}/train", "--output_dir", "{out}/train",
                  "--out_dim", "256", "--local_crops_number", "2", "--batch_size_per_gpu", "2", "--num_workers", "1",
                  "--warmup_epochs", "0", "--freeze_last_layer", "0"]

STEPS = [
    Step("train", TRAIN + ["--epochs", "1"], expect=CHECKPOINT, expect_log=r"Averaged stats"),
    Step("resume", TRAIN + ["--epochs", "2"], expect="train/log.txt", expect_log=r"Found checkpoint at .*checkpoint.pth"),
    Step("evaluate", LAUNCH + ["eval_knn.py", "--arch", "vit_tiny", "--pretrained_weights", "{checkpoint}",
                               "--checkpoint_key", "teacher", "--data_path", "{data}", "--nb_knn", "5",
                               "--batch_size_per_gpu", "4", "--num_workers", "1"],
         expect_log=r"5-NN classifier result: Top1"),
]

NOTES = ("main_dino.py builds its `--arch` choices with `torch.hub.list('facebookresearch/xcit:main')` "
         "(line 47), which needs the network before anything else runs; the zoo machine is offline, so "
         "this run stops there, not at a compatibility problem.")
