"""Execute notebooks in place so their stored outputs are current (`make notebooks`).

Each notebook runs top to bottom in a fresh kernel of this environment, with
notebooks/ as the working directory, exactly as nbval will run it in
`make test`; the outputs are saved back into the file, and only once the whole
notebook ran. A cell that has not finished after TIMEOUT seconds (no cell
needs more than a few minutes; on a loaded machine a kernel's reply has been
seen to go missing, leaving client and kernel both idle) stops that run: the
notebook is run once more in a new kernel before the script gives up.
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

TIMEOUT = 600
TRIES = 2


def execute(path: Path) -> None:
    for attempt in range(1, TRIES + 1):
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(notebook, timeout=TIMEOUT, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        try:
            client.execute()
        except CellTimeoutError as error:
            if attempt == TRIES:
                raise
            print(f"{path}: a cell did not finish in {TIMEOUT} s ({str(error).splitlines()[0]}); running it again")
            continue
        nbformat.write(notebook, path)
        print(f"executed {path}")
        return


if __name__ == "__main__":
    for name in sys.argv[1:]:
        execute(Path(name))
