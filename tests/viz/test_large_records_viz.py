"""Pictures of large records: each shape drawn with its slot, index pages and data pages, readable."""

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.viz.large_records import MAX_PAGES, draw_large_record, large_record_layout
from minidb.viz.style import PAGE_KIND_COLOURS

from tests.pagestore.test_large_records import CS, body, build
from tests.viz.test_readability import problems


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")) if t.get_text()]


def faces(fig: Figure) -> set[str]:
    return {to_hex(p.get_facecolor()) for p in fig.axes[0].patches if isinstance(p, Rectangle)}


@pytest.mark.parametrize("shape,index_pages", [("small", 0), ("large_0", 0), ("large_1", 1), ("large_2", 3)])
def test_each_shape_is_drawn_with_its_pages(shape, index_pages):
    w = build(shape)
    pic = large_record_layout(w.sm, w.rid)
    assert pic.shape == w.flags().name and pic.body_len == len(w.body)
    fig = draw_large_record(pic, title=f"{pic.rid}: {pic.shape}")
    assert isinstance(fig, Figure) and tuple(fig.get_size_inches()) == (9.5, 4.2)
    words = " ".join(texts(fig))
    assert pic.shape in words
    for page, held in zip(pic.pages, pic.page_bytes, strict=True):
        assert f"{page}\n{held} B" in texts(fig)
    assert sum("index" in t for t in texts(fig)) == index_pages + (1 if index_pages else 0)
    kinds = {"file"} | ({"lgdata"} if pic.pages else set()) | ({"lgindex"} if index_pages else set())
    kinds |= {"chunk"} if shape == "large_0" else set()
    assert faces(fig) == {PAGE_KIND_COLOURS[k] for k in kinds}
    assert problems(fig) == []


def test_a_large_0_picture_names_its_chunks_and_a_long_record_is_cut_short():
    w = build("large_0")
    pic = large_record_layout(w.sm, w.rid)
    first = pic.pages[0]
    assert pic.chunks == ((first, 2),) and f"chunks (first page, pages): ({first}, 2)" in " ".join(
        texts(draw_large_record(pic)))
    w.do("append", body(14 * CS))
    pic = large_record_layout(w.sm, w.rid)
    fig = draw_large_record(pic)
    assert len(pic.pages) == 16 and f"+ {16 - MAX_PAGES}\nmore" in texts(fig)
    assert problems(fig) == []
