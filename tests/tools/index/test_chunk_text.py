"""What the name vector of a chunk reads (tools/index/chunk_text.py)."""

from reactstep.tools.index.chunk_text import name_text
from reactstep.tools.source.chunking import chunk_file

SOURCE = """import os


class Map:
    def bind_to_environ(self, environ: "WSGIEnvironment", server_name=None) -> "MapAdapter":
        return MapAdapter(environ)


def getHTTPHeader(
    name,
):
    return name
"""


def test_names_read_as_words_with_the_parameters_of_functions() -> None:
    texts = {chunk.symbol: name_text(chunk) for chunk in chunk_file("werkzeug/routing/map.py", SOURCE)}
    assert texts == {
        "": "map",  # the module's own code reads its file's name
        "Map": "map",
        "Map.bind_to_environ": "map bind to environ (environ wsgi environment server name none)",
        "getHTTPHeader": "get http header",  # a signature's first line only: none of its parameters
    }
