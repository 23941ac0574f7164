"""Lightning 1.x's argparse helpers (``pytorch_lightning/utilities/argparse.py``, 1.0-1.9),
which Lightning 2.0 removed with ``Trainer.add_argparse_args`` / ``from_argparse_args`` and
their ``LightningDataModule`` twins, re-implemented over the signature of the class they are
called on, so today's ``Trainer.__init__`` gives today's options.

1.x added one ``--name`` option per ``__init__`` parameter whose annotation admits str, int,
float or bool, with the parameter's default, and parsed its value by those types: a bool
takes ``--flag`` alone (True) or ``--flag false``; bool-or-int and bool-or-str keep what is
not a truth word as int or str; int-or-float reads ``0.25`` as float and ``10`` as int;
``precision`` is an int where it can be, else a str. ``from_argparse_args`` built the class
from the namespace's keys that its ``__init__`` takes, ignoring the others (the script's own
options), with keyword arguments overriding them.

Today's Trainer widened some unions with str (``val_check_interval``, ``devices``); 1.x read
numbers for them, so a number-or-str parameter reads a number where the value is one and
keeps the str otherwise.
"""

from __future__ import annotations

import inspect
from argparse import ArgumentParser, Namespace, _ArgumentGroup
from typing import Any, Callable, Union

ALLOWED_TYPES = (str, int, float, bool)
IGNORED_PARAMETERS = ("self", "args", "kwargs")
TRUE_WORDS = ("y", "yes", "t", "true", "on", "1")
FALSE_WORDS = ("n", "no", "f", "false", "off", "0")


def str_to_bool_or_str(value: str) -> bool | str:
    """1.x's ``parsing.str_to_bool_or_str``: a truth word (distutils' strtobool's) as bool."""
    lower = value.lower()
    if lower in TRUE_WORDS:
        return True
    if lower in FALSE_WORDS:
        return False
    return value


def str_to_bool(value: str) -> bool:
    converted = str_to_bool_or_str(value)
    if isinstance(converted, bool):
        return converted
    raise ValueError("invalid truth value %s" % converted)


def str_to_bool_or_int(value: str) -> bool | int | str:
    converted = str_to_bool_or_str(value)
    if isinstance(converted, bool):
        return converted
    try:
        return int(converted)
    except ValueError:
        return converted


def int_or_float(value: str) -> int | float:
    """1.x's ``_int_or_float_type``."""
    return float(value) if "." in str(value) else int(value)


def int_or_str(value: str) -> int | str:
    """1.x's ``_precision_allowed_type`` (and ``_gpus_allowed_type``, which kept "0,1")."""
    try:
        return int(value)
    except ValueError:
        return value


def number_or_str(value: str) -> int | float | str:
    """A parameter that takes str beside int or float: the number where it is one."""
    try:
        return int_or_float(value)
    except ValueError:
        return value


def annotation_types(annotation: Any) -> tuple[Any, ...]:
    """The classes an annotation admits: Optional and Union flattened (also nested, as in
    today's ``precision``), a Literal read as the types of its values. 1.x read only one
    level of ``__args__``; a Literal inside a Optional was added later in 1.x."""
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        return tuple(dict.fromkeys(t for arg in typing.get_args(annotation) for t in annotation_types(arg)))
    if origin is typing.Literal:
        return tuple(dict.fromkeys(type(value) for value in typing.get_args(annotation)))
    return (annotation,)


def _parameters(symbol: Any) -> list[inspect.Parameter]:
    try:  # annotations written as strings (``from __future__ import annotations``) read as types
        signature = inspect.signature(symbol, eval_str=True)
    except Exception:  # a name the module cannot resolve: the annotation stays a str, as in 1.x
        signature = inspect.signature(symbol)
    return list(signature.parameters.values())


def removed_parameters(cls: Any) -> list[inspect.Parameter]:
    """The 1.x keywords that a shim of ``cls.__init__`` takes again beside today's signature
    (the Trainer's, ``pytorch_lightning.trainer.removed_keywords``): 1.x's command line had
    options for them, and a namespace holding them builds the Trainer through that shim."""
    init = getattr(cls, "__init__", None)
    while init is not None:
        if callable(getattr(init, "old_parameters", None)):
            return init.old_parameters()
        init = getattr(init, "__wrapped__", None)
    return []


def get_init_arguments_and_types(cls: Any) -> list[tuple[str, tuple[Any, ...], Any]]:
    """1.x's ``get_init_arguments_and_types``: (name, the types it admits, its default) for
    each parameter of ``cls``, and each removed one a shim takes again."""
    parameters = _parameters(cls)
    names = {p.name for p in parameters}
    parameters += [p for p in removed_parameters(cls) if p.name not in names]
    return [(p.name, annotation_types(p.annotation), p.default) for p in parameters]


def _value_parser(name: str, types: tuple[type, ...]) -> tuple[Callable[[str], Any], dict[str, Any]]:
    """How 1.x parsed an option admitting ``types`` (of ALLOWED_TYPES, in its order), with the
    extra ``add_argument`` keywords (a bool may be given without a value)."""
    extra: dict[str, Any] = {}
    parse: Callable[[str], Any]
    if bool in types:
        extra.update(nargs="?", const=True)
        if len(types) == 1:
            parse = str_to_bool
        elif int in types:
            parse = str_to_bool_or_int
        elif str in types:
            parse = str_to_bool_or_str
        else:
            parse = [t for t in types if t is not bool][0]
    elif str in types and (int in types or float in types):
        parse = number_or_str
    else:
        parse = types[0]
    if set(types) == {int, float}:
        parse = int_or_float
    # 1.x's special cases, by parameter name
    if name in ("gpus", "tpu_cores", "precision"):
        parse = int_or_str
    elif name == "track_grad_norm":
        parse = float
    return parse, extra


def _help_from_docstring(docstring: str) -> dict[str, str]:
    """The description of each argument of a Google-style ``Args:`` block."""
    block_indent = None
    current = ""
    found: dict[str, str] = {}
    for line in docstring.split("\n"):
        stripped = line.lstrip()
        if not stripped:
            continue
        indent = len(line) - len(stripped)
        if stripped.startswith(("Args:", "Arguments:", "Parameters:")):
            block_indent = indent + 4
        elif block_indent is None:
            continue
        elif indent < block_indent:
            break
        elif indent == block_indent and ":" in stripped:
            current, description = stripped.split(":", 1)
            found[current] = description.strip()
        elif current:
            found[current] += " " + stripped
    return found


def add_argparse_args(
    cls: type, parent_parser: ArgumentParser, *, use_argument_group: bool = True
) -> Union[ArgumentParser, _ArgumentGroup]:
    """1.x's ``add_argparse_args``: returns ``parent_parser`` with a group of ``cls``'s
    options, or (``use_argument_group=False``) a new parser with ``parent_parser`` as parent."""
    if isinstance(parent_parser, _ArgumentGroup):
        raise RuntimeError("Please only pass an `ArgumentParser` instance.")
    if use_argument_group:
        qualified = ("pl.%s" % cls.__name__ if cls.__module__.startswith("pytorch_lightning.")
                     else "%s.%s" % (cls.__module__, cls.__qualname__))
        parser: Union[ArgumentParser, _ArgumentGroup] = parent_parser.add_argument_group(qualified)
    else:
        parser = ArgumentParser(parents=[parent_parser], add_help=False)

    arguments: list[tuple[str, tuple[Any, ...], Any]] = []
    for symbol in (cls, cls.__init__):  # the class's signature, else its __init__'s
        arguments = [a for a in get_init_arguments_and_types(symbol) if a[0] not in IGNORED_PARAMETERS]
        if arguments:
            break
    helps = _help_from_docstring(cls.__init__.__doc__ or cls.__doc__ or "")
    for name, admitted, default in arguments:
        types = tuple(t for t in ALLOWED_TYPES if t in admitted)
        if not types:  # callbacks, plugins, a logger object: not expressible on a command line
            continue
        parse, extra = _value_parser(name, types)
        parser.add_argument("--%s" % name, dest=name, default=default, type=parse, help=helps.get(name),
                            required=default is inspect.Parameter.empty, **extra)
    return parent_parser if use_argument_group else parser


def parse_argparser(cls: type, arg_parser: Union[ArgumentParser, Namespace]) -> Namespace:
    """1.x's ``parse_argparser``: parse (or take) the namespace, with an option of a bool
    parameter that defaults to a bool given without value as True."""
    args = arg_parser.parse_args() if isinstance(arg_parser, ArgumentParser) else arg_parser
    defaults = {name: (types, default) for name, types, default in get_init_arguments_and_types(cls)}
    values = {}
    for key, value in vars(args).items():
        if key in defaults and value is None:
            types, default = defaults[key]
            if bool in types and isinstance(default, bool):
                value = True
        values[key] = value
    return Namespace(**values)


def from_argparse_args(cls: type, args: Union[Namespace, ArgumentParser], **kwargs: Any) -> Any:
    """1.x's ``from_argparse_args``: ``cls`` built from the namespace's keys that its
    ``__init__`` takes (the program's own options are left out), ``kwargs`` overriding them."""
    if isinstance(args, ArgumentParser):
        args = parse_argparser(cls, args)
    params = vars(args)
    accepted = list(inspect.signature(cls.__init__).parameters) + [p.name for p in removed_parameters(cls)]
    init_kwargs = {name: params[name] for name in accepted if name in params}
    init_kwargs.update(**kwargs)
    return cls(**init_kwargs)


# The classmethods each class gets back (1.x defined them on Trainer and LightningDataModule).
def _classmethod(function: Callable[..., Any], name: str, doc: str) -> classmethod:
    def method(cls: type, *args: Any, **kwargs: Any) -> Any:
        return function(cls, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    return classmethod(method)


def classmethods(names: tuple[str, ...]) -> dict[str, classmethod]:
    """The 1.x classmethods of ``names``, as Lightning 1.x defined them on its classes."""
    made = {
        "add_argparse_args": _classmethod(add_argparse_args, "add_argparse_args", add_argparse_args.__doc__ or ""),
        "from_argparse_args": _classmethod(from_argparse_args, "from_argparse_args",
                                           from_argparse_args.__doc__ or ""),
        "parse_argparser": _classmethod(parse_argparser, "parse_argparser", parse_argparser.__doc__ or ""),
        "get_init_arguments_and_types": _classmethod(get_init_arguments_and_types, "get_init_arguments_and_types",
                                                     get_init_arguments_and_types.__doc__ or ""),
    }
    return {name: made[name] for name in names}
