"""ZhendongWang6/Uformer, a U-shaped transformer for image restoration (CVPR 2022: timm's
layers and NativeScaler, einops, a vendored GradualWarmupScheduler, ``--local_rank`` in
its options). Tested at 4ce7d9b (2022-07-06, the CVPR 2022 code release).

The README's ``sh script/train_denoise.sh``, whose one command is ``python3
./train/train_denoise.py --arch Uformer_B --batch_size 32 --gpu '0,1' --train_ps 128
--train_dir ... --env _0706 --val_dir ... --save_dir ./logs/ --dataset sidd --warmup``, run
as that command (the script's paths are its own) with its options scaled down: Uformer_T,
batch 2, one loader worker each, one epoch (the script validates 4 times an epoch), data
and logs in the scratch folder; then again with ``--resume --pretrain_weights`` and a
second epoch.
"""

import synthetic
from zoo import Step

REPO = "ZhendongWang6/Uformer"
FIELD = "restoration (denoising)"
STACKS = ["modern"]
CHECKPOINT = "logs/denoising/sidd/Uformer_T_zoo/models/model_latest.pth"
INSTALLS = "natsort, h5py, einops (requirements.txt; the stack has the others)"


def make_data(root):
    synthetic.paired_folder(root)


TRAIN = ["python", "./train/train_denoise.py", "--arch", "Uformer_T", "--batch_size", "2", "--gpu", "0",
         "--train_ps", "128", "--train_dir", "{data}/train", "--env", "_zoo", "--val_dir", "{data}/val",
         "--save_dir", "{out}/logs/", "--dataset", "sidd", "--warmup", "--train_workers", "1", "--eval_workers", "1",
         "--checkpoint", "1"]

STEPS = [
    Step("train", TRAIN + ["--nepoch", "1"], expect=CHECKPOINT, expect_log=r"PSNR SIDD"),
    Step("resume", TRAIN + ["--nepoch", "2", "--resume", "--pretrain_weights", "{checkpoint}"], expect=CHECKPOINT,
         expect_log=r"==> Resuming Training"),
]
