"""eriklindernoren/PyTorch-YOLOv3, YOLOv3 object detection (2021: the ``pytorchyolo``
package with its ``yolo-train``/``yolo-test`` console scripts, imgaug 0.4 augmentations,
torchsummary, tensorboard logging). Tested at 73f1fee (2021-05-29).

The README's custom-dataset commands, ``poetry run yolo-train --model ... --data
config/custom.data`` (then again with ``--pretrained_weights`` to start from the checkpoint)
and ``poetry run yolo-test --weights ...``, as ``python -m pytorchyolo.train`` and
``python -m pytorchyolo.test`` with the clone on PYTHONPATH (what the README's
``poetry install`` provides). Overrides are the scripts' own options: the repository's
yolov3-tiny.cfg, a .data file of four synthetic images with one box each, one epoch, one
loader process, logs under the output folder. Run from the output folder (RUN_FROM):
train.py writes ``checkpoints/`` and ``output/`` into the current folder with no option to
move them.
"""

import synthetic
from zoo import Step

REPO = "eriklindernoren/PyTorch-YOLOv3"
FIELD = "object detection"
STACKS = ["modern"]
RUN_FROM = "{out}"
ENV = {"PYTHONPATH": "{repo}"}
CHECKPOINT = "checkpoints/yolov3_ckpt_*.pth"
NOTES = ("Not yet: the first training batch stops in pytorchyolo/utils/loss.py:246, "
         "`gj.clamp_(0, gain[3] - 1)`: an in-place clamp of an integer tensor with a float bound (here a 0-d float tensor; a Python "
         "float fails the same way, and out of place the result comes back as float). "
         "The torch of 2021 cast the bound to the tensor's type; today's promotes the result to float and refuses "
         "to write it in place (RuntimeError: result type Float can't be cast to the desired output type long int). Needs: a "
         "behaviour shim for `Tensor.clamp_`/`clamp` of an integer tensor with floating tensor bounds, "
         "gated on the torch that refuses it.")
INSTALLS = "imgaug, shapely, terminaltables, torchsummary, tensorboard (pyproject.toml's dependencies)"


def make_data(root):
    synthetic.yolo_folder(root)


TRAIN = ["python", "-m", "pytorchyolo.train", "--model", "{repo}/config/yolov3-tiny.cfg", "--data",
         "{data}/custom.data", "--epochs", "1", "--n_cpu", "1", "--logdir", "{out}/logs"]

STEPS = [
    Step("train", TRAIN, expect="checkpoints/yolov3_ckpt_0.pth", expect_log=r"mAP"),
    Step("resume", TRAIN + ["--pretrained_weights", "{checkpoint}"], expect="checkpoints/yolov3_ckpt_0.pth",
         expect_log=r"mAP"),
    Step("evaluate", ["python", "-m", "pytorchyolo.test", "--model", "{repo}/config/yolov3-tiny.cfg", "--weights",
                      "{checkpoint}", "--data", "{data}/custom.data", "--batch_size", "2", "--n_cpu", "1"],
         expect_log=r"mAP"),
]
