"""What the tests of ``minidb grade`` share: a right and a wrong student.py for exercise 04a, and a run."""

from __future__ import annotations

from minidb.cli import main

RIGHT_04A = '''
def choose_victim(frames, hand):
    n = len(frames)
    referenced = [r for _, _, r in frames]
    cleared = []
    for pass_no in (1, 2, 3):
        for _ in range(n):
            index, hand = hand, (hand + 1) % n
            pinned, dirty, _ = frames[index]
            if pinned:
                continue
            if referenced[index] and pass_no < 3:
                referenced[index] = False
                cleared.append(index)
                continue
            if dirty and pass_no == 1:
                continue
            return index, hand, cleared
    return None, hand, cleared
'''

WRONG_04A = RIGHT_04A.replace("pass_no == 1", "pass_no == 9")  # dirty frames are not passed over in pass 1


def grade(capsys, *args) -> tuple[int, str, str]:
    """``minidb grade ARGS``: its exit code, stdout and stderr."""
    code = main(["grade", *args])
    out, err = capsys.readouterr()
    return code, out, err
