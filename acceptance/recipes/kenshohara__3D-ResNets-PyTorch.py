"""kenshohara/3D-ResNets-PyTorch, 3D ResNets for action recognition (2020: videos as JPEG
frame folders, an ActivityNet-style annotation file, ``torch.nn.DataParallel``,
``--distributed`` through ``torch.multiprocessing``). Tested at 540a0ea (2020-05-11).

README's Kinetics training command, its "continue training" command (``--resume_path``)
and its top-k inference command (``--no_train --no_val --inference``), with main.py's own
options: a ResNet-10, 2 classes, 4-frame 32x32 clips, batch 2, one loader thread, a
checkpoint each epoch, 1 + 1 epochs, results in the output folder (which must exist:
main.py does not create it).
"""

import synthetic
from zoo import Step

REPO = "kenshohara/3D-ResNets-PyTorch"
FIELD = "video (action recognition)"
STACKS = ["modern"]
CHECKPOINT = "save_*.pth"
NOTES = ("Not yet: spatial_transforms.py:46 subclasses `torchvision.transforms.Scale`, the old name of `Resize`, "
         "which today's torchvision no longer has; main.py imports it at start, so nothing runs. Neither a shim nor "
         "the scan's inventory knows the name. Needs: `torchvision.transforms.Scale` restored as `Resize`.")


def make_data(root):
    synthetic.video_frames(root)


COMMON = ["python", "main.py", "--root_path", "{data}", "--video_path", "jpg", "--annotation_path", "kinetics.json",
          "--dataset", "kinetics", "--model", "resnet", "--model_depth", "10", "--n_classes", "2",
          "--n_threads", "1", "--sample_size", "32", "--sample_duration", "4"]

# Validation batches are batch_size // n_val_samples (3 by default): the smallest batch is 3.
STEPS = [
    Step("train", COMMON + ["--result_path", "{out}", "--batch_size", "3", "--checkpoint", "1",
                            "--n_epochs", "1"],
         expect="save_1.pth", expect_log=r"Epoch: \[1\]"),
    Step("resume", COMMON + ["--result_path", "{out}", "--resume_path", "{out}/save_1.pth",
                             "--batch_size", "3", "--checkpoint", "1", "--n_epochs", "2"],
         expect="save_2.pth", expect_log=r"Epoch: \[2\]"),
    Step("evaluate", COMMON + ["--result_path", "{out}", "--resume_path", "{checkpoint}", "--no_train",
                               "--no_val", "--inference", "--output_topk", "1", "--inference_batch_size", "1"],
         expect="val.json"),
]
