"""The export formats by name: one line per format, the module that holds its `FORMAT` value
(`dpassess.export.Format`).

Names only, and nothing imported: the CLI lists the choices of `--format` from here without
loading a format (`dpassess --help` stays fast). `dpassess.export.EXPORTERS` imports a format's
module the first time it is asked for it. The folder under `exports/`, the file names, the
languages and the options are the format's own (its `FORMAT`).
"""

from __future__ import annotations

#: format name (the `--format` value) -> the module whose `FORMAT` is that format.
FORMATS: dict[str, str] = {
    "qti21": "dpassess.export.qti.qti21",
    "moodle-xml": "dpassess.export.moodle.moodle_xml",
    "gift": "dpassess.export.moodle.gift",
    "canvas": "dpassess.export.canvas.qti12",
}

#: The printable papers of an assembled form, writers on the same contract (`Format`): writer
#: name -> `module:VALUE`. They are no `--format` choices: a paper prints what only an assembled
#: form has (positions, the answer sheet, the key's hash), so `dpassess assemble` writes them,
#: each with the `Paper` it builds (`dpassess.export.PAPER_WRITERS`).
PAPERS: dict[str, str] = {
    "paper-html": "dpassess.assemble.paper:HTML",
    "paper-pdf": "dpassess.assemble.paper:PDF",
}
