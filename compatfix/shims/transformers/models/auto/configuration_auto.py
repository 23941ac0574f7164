"""Shims for ``transformers.models.auto.configuration_auto``: ``MODEL_NAMES_MAPPING``, 4.x's
table of model type -> the model's display name (``"bert": "BERT"``), which transformers 5
removed. 2020-22 code reads it to name a config's model, and registers its own model types in
it (``MODEL_NAMES_MAPPING.update``) next to ``CONFIG_MAPPING``; transformers 5 itself no longer
reads it, so such an update is kept and has no other effect.

The data is the last 4.x release's (4.57.1), read out of its source, in its order.
"""

from __future__ import annotations

from collections import OrderedDict

from compatfix.patching import restore_names
from compatfix.registry import Shim

# transformers 4.57.1's MODEL_NAMES_MAPPING (configuration_auto.py), in its order.
MODEL_NAMES = (
    ('aimv2', 'AIMv2'), ('aimv2_vision_model', 'Aimv2VisionModel'), ('albert', 'ALBERT'), ('align', 'ALIGN'),
    ('altclip', 'AltCLIP'), ('apertus', 'Apertus'), ('arcee', 'Arcee'), ('aria', 'Aria'),
    ('aria_text', 'AriaText'), ('audio-spectrogram-transformer', 'Audio Spectrogram Transformer'),
    ('autoformer', 'Autoformer'), ('aya_vision', 'AyaVision'), ('bamba', 'Bamba'), ('bark', 'Bark'),
    ('bart', 'BART'), ('barthez', 'BARThez'), ('bartpho', 'BARTpho'), ('beit', 'BEiT'), ('bert', 'BERT'),
    ('bert-generation', 'Bert Generation'), ('bert-japanese', 'BertJapanese'), ('bertweet', 'BERTweet'),
    ('big_bird', 'BigBird'), ('bigbird_pegasus', 'BigBird-Pegasus'), ('biogpt', 'BioGpt'), ('bit', 'BiT'),
    ('bitnet', 'BitNet'), ('blenderbot', 'Blenderbot'), ('blenderbot-small', 'BlenderbotSmall'), ('blip', 'BLIP'),
    ('blip-2', 'BLIP-2'), ('blip_2_qformer', 'BLIP-2 QFormer'), ('bloom', 'BLOOM'), ('blt', 'Blt'),
    ('bort', 'BORT'), ('bridgetower', 'BridgeTower'), ('bros', 'BROS'), ('byt5', 'ByT5'),
    ('camembert', 'CamemBERT'), ('canine', 'CANINE'), ('chameleon', 'Chameleon'), ('chinese_clip', 'Chinese-CLIP'),
    ('chinese_clip_vision_model', 'ChineseCLIPVisionModel'), ('clap', 'CLAP'), ('clip', 'CLIP'),
    ('clip_text_model', 'CLIPTextModel'), ('clip_vision_model', 'CLIPVisionModel'), ('clipseg', 'CLIPSeg'),
    ('clvp', 'CLVP'), ('code_llama', 'CodeLlama'), ('codegen', 'CodeGen'), ('cohere', 'Cohere'),
    ('cohere2', 'Cohere2'), ('cohere2_vision', 'Cohere2Vision'), ('colpali', 'ColPali'), ('colqwen2', 'ColQwen2'),
    ('conditional_detr', 'Conditional DETR'), ('convbert', 'ConvBERT'), ('convnext', 'ConvNeXT'),
    ('convnextv2', 'ConvNeXTV2'), ('cpm', 'CPM'), ('cpmant', 'CPM-Ant'), ('csm', 'CSM'), ('ctrl', 'CTRL'),
    ('cvt', 'CvT'), ('d_fine', 'D-FINE'), ('dab-detr', 'DAB-DETR'), ('dac', 'DAC'),
    ('data2vec-audio', 'Data2VecAudio'), ('data2vec-text', 'Data2VecText'), ('data2vec-vision', 'Data2VecVision'),
    ('dbrx', 'DBRX'), ('deberta', 'DeBERTa'), ('deberta-v2', 'DeBERTa-v2'),
    ('decision_transformer', 'Decision Transformer'), ('deepseek_v2', 'DeepSeek-V2'),
    ('deepseek_v3', 'DeepSeek-V3'), ('deepseek_vl', 'DeepseekVL'), ('deepseek_vl_hybrid', 'DeepseekVLHybrid'),
    ('deformable_detr', 'Deformable DETR'), ('deit', 'DeiT'), ('deplot', 'DePlot'),
    ('depth_anything', 'Depth Anything'), ('depth_anything_v2', 'Depth Anything V2'), ('depth_pro', 'DepthPro'),
    ('deta', 'DETA'), ('detr', 'DETR'), ('dia', 'Dia'), ('dialogpt', 'DialoGPT'), ('diffllama', 'DiffLlama'),
    ('dinat', 'DiNAT'), ('dinov2', 'DINOv2'), ('dinov2_with_registers', 'DINOv2 with Registers'),
    ('dinov3_convnext', 'DINOv3 ConvNext'), ('dinov3_vit', 'DINOv3 ViT'), ('distilbert', 'DistilBERT'),
    ('dit', 'DiT'), ('doge', 'Doge'), ('donut-swin', 'DonutSwin'), ('dots1', 'dots1'), ('dpr', 'DPR'),
    ('dpt', 'DPT'), ('edgetam', 'EdgeTAM'), ('edgetam_video', 'EdgeTamVideo'),
    ('edgetam_vision_model', 'EdgeTamVisionModel'), ('efficientformer', 'EfficientFormer'),
    ('efficientloftr', 'EfficientLoFTR'), ('efficientnet', 'EfficientNet'), ('electra', 'ELECTRA'),
    ('emu3', 'Emu3'), ('encodec', 'EnCodec'), ('encoder-decoder', 'Encoder decoder'), ('eomt', 'EoMT'),
    ('ernie', 'ERNIE'), ('ernie4_5', 'Ernie4_5'), ('ernie4_5_moe', 'Ernie4_5_MoE'), ('ernie_m', 'ErnieM'),
    ('esm', 'ESM'), ('evolla', 'Evolla'), ('exaone4', 'EXAONE-4.0'), ('falcon', 'Falcon'), ('falcon3', 'Falcon3'),
    ('falcon_h1', 'FalconH1'), ('falcon_mamba', 'FalconMamba'), ('fastspeech2_conformer', 'FastSpeech2Conformer'),
    ('fastspeech2_conformer_with_hifigan', 'FastSpeech2ConformerWithHifiGan'), ('flan-t5', 'FLAN-T5'),
    ('flan-ul2', 'FLAN-UL2'), ('flaubert', 'FlauBERT'), ('flava', 'FLAVA'), ('flex_olmo', 'FlexOlmo'),
    ('florence2', 'Florence2'), ('fnet', 'FNet'), ('focalnet', 'FocalNet'),
    ('fsmt', 'FairSeq Machine-Translation'), ('funnel', 'Funnel Transformer'), ('fuyu', 'Fuyu'),
    ('gemma', 'Gemma'), ('gemma2', 'Gemma2'), ('gemma3', 'Gemma3ForConditionalGeneration'),
    ('gemma3_text', 'Gemma3ForCausalLM'), ('gemma3n', 'Gemma3nForConditionalGeneration'),
    ('gemma3n_audio', 'Gemma3nAudioEncoder'), ('gemma3n_text', 'Gemma3nForCausalLM'),
    ('gemma3n_vision', 'TimmWrapperModel'), ('git', 'GIT'), ('glm', 'GLM'), ('glm4', 'GLM4'),
    ('glm4_moe', 'Glm4MoE'), ('glm4v', 'GLM4V'), ('glm4v_moe', 'GLM4VMOE'), ('glm4v_moe_text', 'GLM4VMOE'),
    ('glm4v_text', 'GLM4V'), ('glpn', 'GLPN'), ('got_ocr2', 'GOT-OCR2'), ('gpt-sw3', 'GPT-Sw3'),
    ('gpt2', 'OpenAI GPT-2'), ('gpt_bigcode', 'GPTBigCode'), ('gpt_neo', 'GPT Neo'), ('gpt_neox', 'GPT NeoX'),
    ('gpt_neox_japanese', 'GPT NeoX Japanese'), ('gpt_oss', 'GptOss'), ('gptj', 'GPT-J'),
    ('gptsan-japanese', 'GPTSAN-japanese'), ('granite', 'Granite'), ('granite_speech', 'GraniteSpeech'),
    ('granitemoe', 'GraniteMoeMoe'), ('granitemoehybrid', 'GraniteMoeHybrid'),
    ('granitemoeshared', 'GraniteMoeSharedMoe'), ('granitevision', 'LLaVA-NeXT'), ('graphormer', 'Graphormer'),
    ('grounding-dino', 'Grounding DINO'), ('groupvit', 'GroupViT'), ('helium', 'Helium'), ('herbert', 'HerBERT'),
    ('hgnet_v2', 'HGNet-V2'), ('hiera', 'Hiera'), ('hubert', 'Hubert'), ('hunyuan_v1_dense', 'HunYuanDenseV1'),
    ('hunyuan_v1_moe', 'HunYuanMoeV1'), ('ibert', 'I-BERT'), ('idefics', 'IDEFICS'), ('idefics2', 'Idefics2'),
    ('idefics3', 'Idefics3'), ('idefics3_vision', 'Idefics3VisionTransformer'), ('ijepa', 'I-JEPA'),
    ('imagegpt', 'ImageGPT'), ('informer', 'Informer'), ('instructblip', 'InstructBLIP'),
    ('instructblipvideo', 'InstructBlipVideo'), ('internvl', 'InternVL'), ('internvl_vision', 'InternVLVision'),
    ('jamba', 'Jamba'), ('janus', 'Janus'), ('jetmoe', 'JetMoe'), ('jukebox', 'Jukebox'), ('kosmos-2', 'KOSMOS-2'),
    ('kosmos-2.5', 'KOSMOS-2.5'), ('kyutai_speech_to_text', 'KyutaiSpeechToText'), ('layoutlm', 'LayoutLM'),
    ('layoutlmv2', 'LayoutLMv2'), ('layoutlmv3', 'LayoutLMv3'), ('layoutxlm', 'LayoutXLM'), ('led', 'LED'),
    ('levit', 'LeViT'), ('lfm2', 'Lfm2'), ('lfm2_vl', 'Lfm2Vl'), ('lightglue', 'LightGlue'), ('lilt', 'LiLT'),
    ('llama', 'LLaMA'), ('llama2', 'Llama2'), ('llama3', 'Llama3'), ('llama4', 'Llama4'),
    ('llama4_text', 'Llama4ForCausalLM'), ('llava', 'LLaVa'), ('llava_next', 'LLaVA-NeXT'),
    ('llava_next_video', 'LLaVa-NeXT-Video'), ('llava_onevision', 'LLaVA-Onevision'),
    ('longcat_flash', 'LongCatFlash'), ('longformer', 'Longformer'), ('longt5', 'LongT5'), ('luke', 'LUKE'),
    ('lxmert', 'LXMERT'), ('m2m_100', 'M2M100'), ('madlad-400', 'MADLAD-400'), ('mamba', 'Mamba'),
    ('mamba2', 'mamba2'), ('marian', 'Marian'), ('markuplm', 'MarkupLM'), ('mask2former', 'Mask2Former'),
    ('maskformer', 'MaskFormer'), ('maskformer-swin', 'MaskFormerSwin'), ('matcha', 'MatCha'), ('mbart', 'mBART'),
    ('mbart50', 'mBART-50'), ('mctct', 'M-CTC-T'), ('mega', 'MEGA'), ('megatron-bert', 'Megatron-BERT'),
    ('megatron_gpt2', 'Megatron-GPT2'), ('metaclip_2', 'MetaCLIP 2'), ('mgp-str', 'MGP-STR'), ('mimi', 'Mimi'),
    ('minimax', 'MiniMax'), ('ministral', 'Ministral'), ('mistral', 'Mistral'), ('mistral3', 'Mistral3'),
    ('mixtral', 'Mixtral'), ('mlcd', 'MLCD'), ('mllama', 'Mllama'), ('mluke', 'mLUKE'),
    ('mm-grounding-dino', 'MM Grounding DINO'), ('mms', 'MMS'), ('mobilebert', 'MobileBERT'),
    ('mobilenet_v1', 'MobileNetV1'), ('mobilenet_v2', 'MobileNetV2'), ('mobilevit', 'MobileViT'),
    ('mobilevitv2', 'MobileViTV2'), ('modernbert', 'ModernBERT'), ('modernbert-decoder', 'ModernBertDecoder'),
    ('moonshine', 'Moonshine'), ('moshi', 'Moshi'), ('mpnet', 'MPNet'), ('mpt', 'MPT'), ('mra', 'MRA'),
    ('mt5', 'MT5'), ('musicgen', 'MusicGen'), ('musicgen_melody', 'MusicGen Melody'), ('mvp', 'MVP'),
    ('myt5', 'myt5'), ('nat', 'NAT'), ('nemotron', 'Nemotron'), ('nezha', 'Nezha'), ('nllb', 'NLLB'),
    ('nllb-moe', 'NLLB-MOE'), ('nougat', 'Nougat'), ('nystromformer', 'Nyströmformer'), ('olmo', 'OLMo'),
    ('olmo2', 'OLMo2'), ('olmo3', 'Olmo3'), ('olmoe', 'OLMoE'), ('omdet-turbo', 'OmDet-Turbo'),
    ('oneformer', 'OneFormer'), ('open-llama', 'OpenLlama'), ('openai-gpt', 'OpenAI GPT'), ('opt', 'OPT'),
    ('ovis2', 'Ovis2'), ('owlv2', 'OWLv2'), ('owlvit', 'OWL-ViT'), ('paligemma', 'PaliGemma'),
    ('parakeet', 'Parakeet'), ('parakeet_ctc', 'Parakeet'), ('parakeet_encoder', 'ParakeetEncoder'),
    ('patchtsmixer', 'PatchTSMixer'), ('patchtst', 'PatchTST'), ('pegasus', 'Pegasus'), ('pegasus_x', 'PEGASUS-X'),
    ('perceiver', 'Perceiver'), ('perception_encoder', 'PerceptionEncoder'), ('perception_lm', 'PerceptionLM'),
    ('persimmon', 'Persimmon'), ('phi', 'Phi'), ('phi3', 'Phi3'), ('phi4_multimodal', 'Phi4Multimodal'),
    ('phimoe', 'Phimoe'), ('phobert', 'PhoBERT'), ('pix2struct', 'Pix2Struct'), ('pixtral', 'Pixtral'),
    ('plbart', 'PLBart'), ('poolformer', 'PoolFormer'), ('pop2piano', 'Pop2Piano'),
    ('prompt_depth_anything', 'PromptDepthAnything'), ('prophetnet', 'ProphetNet'), ('pvt', 'PVT'),
    ('pvt_v2', 'PVTv2'), ('qdqbert', 'QDQBert'), ('qwen2', 'Qwen2'), ('qwen2_5_omni', 'Qwen2_5Omni'),
    ('qwen2_5_vl', 'Qwen2_5_VL'), ('qwen2_5_vl_text', 'Qwen2_5_VL'), ('qwen2_audio', 'Qwen2Audio'),
    ('qwen2_audio_encoder', 'Qwen2AudioEncoder'), ('qwen2_moe', 'Qwen2MoE'), ('qwen2_vl', 'Qwen2VL'),
    ('qwen2_vl_text', 'Qwen2VL'), ('qwen3', 'Qwen3'), ('qwen3_moe', 'Qwen3MoE'), ('qwen3_next', 'Qwen3Next'),
    ('qwen3_omni_moe', 'Qwen3OmniMoE'), ('qwen3_vl', 'Qwen3VL'), ('qwen3_vl_moe', 'Qwen3VLMoe'),
    ('qwen3_vl_moe_text', 'Qwen3VLMoe'), ('qwen3_vl_text', 'Qwen3VL'), ('rag', 'RAG'), ('realm', 'REALM'),
    ('recurrent_gemma', 'RecurrentGemma'), ('reformer', 'Reformer'), ('regnet', 'RegNet'), ('rembert', 'RemBERT'),
    ('resnet', 'ResNet'), ('retribert', 'RetriBERT'), ('roberta', 'RoBERTa'),
    ('roberta-prelayernorm', 'RoBERTa-PreLayerNorm'), ('roc_bert', 'RoCBert'), ('roformer', 'RoFormer'),
    ('rt_detr', 'RT-DETR'), ('rt_detr_resnet', 'RT-DETR-ResNet'), ('rt_detr_v2', 'RT-DETRv2'), ('rwkv', 'RWKV'),
    ('sam', 'SAM'), ('sam2', 'SAM2'), ('sam2_hiera_det_model', 'Sam2HieraDetModel'),
    ('sam2_video', 'Sam2VideoModel'), ('sam2_vision_model', 'Sam2VisionModel'), ('sam_hq', 'SAM-HQ'),
    ('sam_hq_vision_model', 'SamHQVisionModel'), ('sam_vision_model', 'SamVisionModel'),
    ('seamless_m4t', 'SeamlessM4T'), ('seamless_m4t_v2', 'SeamlessM4Tv2'), ('seed_oss', 'SeedOss'),
    ('segformer', 'SegFormer'), ('seggpt', 'SegGPT'), ('sew', 'SEW'), ('sew-d', 'SEW-D'),
    ('shieldgemma2', 'Shieldgemma2'), ('siglip', 'SigLIP'), ('siglip2', 'SigLIP2'),
    ('siglip2_vision_model', 'Siglip2VisionModel'), ('siglip_vision_model', 'SiglipVisionModel'),
    ('smollm3', 'SmolLM3'), ('smolvlm', 'SmolVLM'), ('smolvlm_vision', 'SmolVLMVisionTransformer'),
    ('speech-encoder-decoder', 'Speech Encoder decoder'), ('speech_to_text', 'Speech2Text'),
    ('speech_to_text_2', 'Speech2Text2'), ('speecht5', 'SpeechT5'), ('splinter', 'Splinter'),
    ('squeezebert', 'SqueezeBERT'), ('stablelm', 'StableLm'), ('starcoder2', 'Starcoder2'),
    ('superglue', 'SuperGlue'), ('superpoint', 'SuperPoint'), ('swiftformer', 'SwiftFormer'),
    ('swin', 'Swin Transformer'), ('swin2sr', 'Swin2SR'), ('swinv2', 'Swin Transformer V2'),
    ('switch_transformers', 'SwitchTransformers'), ('t5', 'T5'), ('t5gemma', 'T5Gemma'), ('t5v1.1', 'T5v1.1'),
    ('table-transformer', 'Table Transformer'), ('tapas', 'TAPAS'), ('tapex', 'TAPEX'), ('textnet', 'TextNet'),
    ('time_series_transformer', 'Time Series Transformer'), ('timesfm', 'TimesFm'), ('timesformer', 'TimeSformer'),
    ('timm_backbone', 'TimmBackbone'), ('timm_wrapper', 'TimmWrapperModel'),
    ('trajectory_transformer', 'Trajectory Transformer'), ('transfo-xl', 'Transformer-XL'), ('trocr', 'TrOCR'),
    ('tvlt', 'TVLT'), ('tvp', 'TVP'), ('udop', 'UDOP'), ('ul2', 'UL2'), ('umt5', 'UMT5'),
    ('unispeech', 'UniSpeech'), ('unispeech-sat', 'UniSpeechSat'), ('univnet', 'UnivNet'), ('upernet', 'UPerNet'),
    ('van', 'VAN'), ('vaultgemma', 'VaultGemma'), ('video_llava', 'VideoLlava'), ('videomae', 'VideoMAE'),
    ('vilt', 'ViLT'), ('vipllava', 'VipLlava'), ('vision-encoder-decoder', 'Vision Encoder decoder'),
    ('vision-text-dual-encoder', 'VisionTextDualEncoder'), ('visual_bert', 'VisualBERT'), ('vit', 'ViT'),
    ('vit_hybrid', 'ViT Hybrid'), ('vit_mae', 'ViTMAE'), ('vit_msn', 'ViTMSN'), ('vitdet', 'VitDet'),
    ('vitmatte', 'ViTMatte'), ('vitpose', 'ViTPose'), ('vitpose_backbone', 'ViTPoseBackbone'), ('vits', 'VITS'),
    ('vivit', 'ViViT'), ('vjepa2', 'VJEPA2Model'), ('voxtral', 'Voxtral'), ('voxtral_encoder', 'Voxtral Encoder'),
    ('wav2vec2', 'Wav2Vec2'), ('wav2vec2-bert', 'Wav2Vec2-BERT'), ('wav2vec2-conformer', 'Wav2Vec2-Conformer'),
    ('wav2vec2_phoneme', 'Wav2Vec2Phoneme'), ('wavlm', 'WavLM'), ('whisper', 'Whisper'), ('xclip', 'X-CLIP'),
    ('xcodec', 'X-CODEC'), ('xglm', 'XGLM'), ('xlm', 'XLM'), ('xlm-prophetnet', 'XLM-ProphetNet'),
    ('xlm-roberta', 'XLM-RoBERTa'), ('xlm-roberta-xl', 'XLM-RoBERTa-XL'), ('xlm-v', 'XLM-V'), ('xlnet', 'XLNet'),
    ('xls_r', 'XLS-R'), ('xlsr_wav2vec2', 'XLSR-Wav2Vec2'), ('xlstm', 'xLSTM'), ('xmod', 'X-MOD'),
    ('yolos', 'YOLOS'), ('yoso', 'YOSO'), ('zamba', 'Zamba'), ('zamba2', 'Zamba2'), ('zoedepth', 'ZoeDepth'),
)

_made: dict[str, OrderedDict] = {}


def model_names_mapping() -> OrderedDict:
    """4.x's MODEL_NAMES_MAPPING, made once, so the top-level name and this module's are one object."""
    if "mapping" not in _made:
        _made["mapping"] = OrderedDict(MODEL_NAMES)
    return _made["mapping"]


def restore_model_names(module) -> None:
    restore_names(module, {"MODEL_NAMES_MAPPING": model_names_mapping()},
                  "transformers.models.auto.configuration_auto.MODEL_NAMES_MAPPING")


SHIMS = (
    Shim(
        "transformers.models.auto.configuration_auto.MODEL_NAMES_MAPPING",
        targets=["transformers.models.auto.configuration_auto"],
        requires={"transformers": ">=5.0"},
        apply=restore_model_names,
        restores=["MODEL_NAMES_MAPPING"],
        broke="transformers 5 removed MODEL_NAMES_MAPPING (model type -> model name), which 2020-22 code reads and "
        "extends with its own model types",
        summary="restore it as 4.57.1's table, one object with the top-level name",
        replacement="your own table; the model's name is in its config class (config.model_type)",
        rewrites={"transformers.models.auto.configuration_auto.MODEL_NAMES_MAPPING":
                  "your own {model_type: name} table (transformers 5 has none)"},
    ),
)
