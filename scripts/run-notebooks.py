"""Execute notebooks in place so their stored outputs are current (`make notebooks`).

Each notebook runs top to bottom in a fresh kernel of this environment, with
notebooks/ as the working directory, exactly as nbval will run it in
`make test`; the outputs are saved back into the file.
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nbformat.write(notebook, path)
    print(f"executed {path}")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        execute(Path(name))
