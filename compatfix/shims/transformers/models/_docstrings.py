"""Data: the docstring constants that transformers 4.x's BERT, ALBERT and RoBERTa modeling
modules defined (``<MODEL>_START_DOCSTRING``, the class introduction; ``<MODEL>_INPUTS_DOCSTRING``,
the forward arguments, with ``{0}`` for the input shape). 2020-22 models built on these decorate
their classes with them (``@add_start_docstrings(..., BERT_START_DOCSTRING)``), so what code
needs is that they exist, that the INPUTS ones take the shape through ``str.format``, and that
they name the same arguments as 4.x's (input_ids ... return_dict). The wording is compatfix's
own summary, not 4.x's text. Imported at the first use of one.
"""


def _start(config: str) -> str:
    return ("\n\n    This model inherits from [`PreTrainedModel`] (loading, saving, resizing the input embeddings,\n"
            "    pruning heads) and is a PyTorch `torch.nn.Module`.\n\n"
            "    Parameters:\n"
            "        config ([`%s`]): the model's configuration; building from it does not load weights,\n"
            "            [`~PreTrainedModel.from_pretrained`] does.\n" % config)


# 4.x's forward arguments, in its order, each with a one-line summary
_ARGUMENTS = (
    ("input_ids (`torch.LongTensor` of shape `({0})`)", "token indices in the vocabulary."),
    ("attention_mask (`torch.FloatTensor` of shape `({0})`, *optional*)", "1 for tokens to attend to, 0 for padding."),
    ("token_type_ids (`torch.LongTensor` of shape `({0})`, *optional*)", "segment indices, 0 or 1."),
    ("position_ids (`torch.LongTensor` of shape `({0})`, *optional*)", "position indices of each token."),
    ("head_mask (`torch.FloatTensor` of shape `(num_heads,)` or `(num_layers, num_heads)`, *optional*)",
     "1 keeps a self-attention head, 0 masks it."),
    ("inputs_embeds (`torch.FloatTensor` of shape `({0}, hidden_size)`, *optional*)",
     "embeddings to use instead of input_ids."),
    ("output_attentions (`bool`, *optional*)", "whether to return every layer's attention weights."),
    ("output_hidden_states (`bool`, *optional*)", "whether to return every layer's hidden states."),
    ("return_dict (`bool`, *optional*)", "whether to return a ModelOutput instead of a tuple."),
)

_INPUTS = "\n    Args:\n" + "".join("        %s:\n            %s\n" % argument for argument in _ARGUMENTS)

BERT_START_DOCSTRING = _start("BertConfig")
BERT_INPUTS_DOCSTRING = _INPUTS
ALBERT_START_DOCSTRING = _start("AlbertConfig")
ALBERT_INPUTS_DOCSTRING = _INPUTS
ROBERTA_START_DOCSTRING = _start("RobertaConfig")
ROBERTA_INPUTS_DOCSTRING = _INPUTS
