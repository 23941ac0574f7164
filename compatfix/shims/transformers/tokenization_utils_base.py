"""Shims for ``transformers.tokenization_utils_base``: the tokenizers' 4.x file keywords.

transformers 5 renamed every tokenizer's ``vocab_file`` (and the BPE ones' ``merges_file``)
to ``vocab`` (``merges``), which take the same path or the loaded data. The old keywords
fall into ``**kwargs`` and are ignored without a word: ``BertTokenizer(vocab_file=path)``
builds an empty vocabulary and tokenizes every word as ``[UNK]``. A tokenizer class is
defined when its model module loads, so the base class wraps each subclass's
``__init__`` as the class is made."""

from __future__ import annotations

from typing import Any, Callable

from compatfix.patching import replace_attribute, wrap, wrapped_by
from compatfix.registry import RISK_BEHAVIOUR, Shim

SHIM = "transformers.tokenizer_file_keywords"
# 4.x keyword -> transformers 5's
FILE_KEYWORDS = {"vocab_file": "vocab", "merges_file": "merges"}


def _accepting_file_keywords(init: Callable[..., Any]) -> Callable[..., Any]:
    import inspect

    signature = inspect.signature(init)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = signature.bind_partial(self, *args).arguments
        for old, new in FILE_KEYWORDS.items():
            # from_pretrained passes both (the file, and the same file as vocab): only a call
            # that names the file under its old keyword alone gets it under the new one
            if kwargs.get(old) is not None and new in signature.parameters and new not in given \
                    and kwargs.get(new) is None:
                kwargs[new] = kwargs[old]
        init(self, *args, **kwargs)

    return __init__


def _takes_renamed_keywords(cls: type) -> bool:
    import inspect

    init = vars(cls).get("__init__")
    if init is None:
        return False
    try:
        parameters = inspect.signature(init).parameters
    except (TypeError, ValueError):
        return False
    return any(new in parameters and old not in parameters for old, new in FILE_KEYWORDS.items())


def _wrap_if_renamed(cls: type) -> None:
    if _takes_renamed_keywords(cls):
        wrap(cls, "__init__", _accepting_file_keywords, SHIM)


def accept_file_keywords(module) -> None:
    base = module.PreTrainedTokenizerBase
    pending, seen = list(base.__subclasses__()), set()
    while pending:  # the classes made before this shim ran (normally none)
        cls = pending.pop()
        if cls not in seen:
            seen.add(cls)
            _wrap_if_renamed(cls)
            pending.extend(cls.__subclasses__())
    inherited = vars(base).get("__init_subclass__")
    if inherited is not None and wrapped_by(inherited, SHIM):
        return  # applied already (looked up on the class, it would be a bound method without the mark)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if inherited is not None:
            inherited.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            _wrap_if_renamed(cls)
        except Exception as error:
            # this runs as a model module defines its tokenizer, long after the apply: a failure
            # here must not fail that import, so it is said once (raised in strict mode)
            from compatfix._messages import say
            from compatfix._settings import Settings

            if Settings.from_environ().strict:
                raise
            say("%s could not wrap %s.__init__ (%s: %s): its vocab_file= and merges_file= stay ignored"
                % (SHIM, cls.__qualname__, type(error).__name__, error), key=SHIM + ".subclass")

    replace_attribute(base, "__init_subclass__", classmethod(__init_subclass__), SHIM)


SHIMS = (
    Shim(
        SHIM,
        targets=["transformers.tokenization_utils_base"],
        requires={"transformers": ">=5.0"},
        apply=accept_file_keywords,
        risk=RISK_BEHAVIOUR,
        broke="transformers 5 renamed the tokenizers' vocab_file and merges_file to vocab and merges; "
        "BertTokenizer(vocab_file=path) or GPT2Tokenizer(vocab_file=, merges_file=) ignores them and builds "
        "an empty vocabulary, so every word becomes [UNK] without an error",
        summary="pass a tokenizer's vocab_file= and merges_file= on as vocab= and merges= where its __init__ "
        "takes those; calls that name the new keywords, or pass the files by position, are unchanged",
        replacement="BertTokenizer(vocab=path), GPT2Tokenizer(vocab=..., merges=...), or from_pretrained",
        rewrites={"transformers.BertTokenizer(+vocab_file)": "vocab=path",
                  "transformers.GPT2Tokenizer(+vocab_file)": "vocab=path",
                  "transformers.GPT2Tokenizer(+merges_file)": "merges=path"},
    ),
)
