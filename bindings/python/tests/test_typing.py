"""The package's type hints (PEP 561): libcomm ships py.typed, and every
public function and every public method of its public classes annotates
each parameter and its return, with annotations that resolve."""

import inspect
import pathlib
import typing

import pytest

import libcomm as comm


def public_callables():
    for name in comm.__all__:
        obj = getattr(comm, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and obj.__module__.startswith("libcomm"):
            for attribute, member in vars(obj).items():
                if inspect.isfunction(member) and (attribute == "__init__" or not attribute.startswith("_")):
                    yield f"{name}.{attribute}", member


CALLABLES = dict(public_callables())


def test_the_package_says_it_is_typed():
    assert (pathlib.Path(comm.__file__).parent / "py.typed").is_file()


def test_the_public_api_was_found():
    for name in ("all_reduce", "init", "get_rank", "CommHandle.wait", "P2POp.__init__", "CommError.__init__"):
        assert name in CALLABLES, sorted(CALLABLES)


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_every_parameter_and_return_is_annotated(name):
    function = CALLABLES[name]
    signature = inspect.signature(function)
    missing = [p.name for p in signature.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    assert not missing, f"{name}: parameters without a type: {missing}"
    assert signature.return_annotation is not inspect.Signature.empty, f"{name} has no return type"
    typing.get_type_hints(function)  # every annotation names something real


def test_collectives_take_out():
    for name in ("all_reduce", "all_gather_into_tensor", "all_gather_into_tensor_uneven", "reduce_scatter_tensor",
                 "reduce_scatter_tensor_uneven", "reduce", "broadcast", "scatter_tensor", "gather_into_tensor",
                 "all_to_all_with_output_shape", "all_to_all_single_with_output_shape", "recv", "irecv"):
        parameter = inspect.signature(CALLABLES[name]).parameters.get("out")
        assert parameter is not None and parameter.kind is inspect.Parameter.KEYWORD_ONLY, name
