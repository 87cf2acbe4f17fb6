"""./workbook hint EXERCISE: the next hint for an exercise, or the one for the mistake its check named."""
from __future__ import annotations

from ..config import STATE
from ..course import UsageError, chapter_advice, hints_of, resolve_exercise
from .. import ui
from ..loop.record import load_record
from ..loop.run_checks import mistake_ids


def arguments(parser) -> None:
    parser.add_argument("exercise", metavar="EXERCISE")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--tier", type=int, help="show this hint (1 is the gentlest)")
    group.add_argument("--reset", action="store_true", help="start the hints over")


def run(args) -> int:
    chapter, exercise = resolve_exercise(args.exercise)
    hints = hints_of(chapter, exercise)
    if not hints.tiers:
        raise UsageError(f"exercise {exercise} has no hints in chapters/{chapter.folder}/hints.md")
    count = len(hints.tiers)
    state = STATE / "hints" / exercise
    seen = int(state.read_text()) if state.exists() else 0
    if args.reset:
        state.unlink(missing_ok=True)
        ui.say(f"Hints for {exercise} start over: ./workbook hint {exercise} shows hint 1 of {count}.")
        return 0
    if args.tier is not None:
        if not 1 <= args.tier <= count:
            raise UsageError(f"exercise {exercise} has hints 1 to {count}, not {args.tier}")
        tier = args.tier
    else:
        tier = min(seen + 1, count)
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(str(max(seen, tier)))
    verdict = load_record(chapter).get(exercise, {})
    named = mistake_ids(verdict.get("message", ""))  # what the last check proved, by id
    advice = dict(chapter_advice(chapter, exercise))
    for mistake in named:
        if mistake in advice:
            ui.say(f"{ui.bold('Your last check found a known mistake')}: [{mistake}]")
            ui.say(f"  {advice[mistake]}")
            ui.say("")
    ui.say(ui.bold(f"Hint {tier} of {count} for exercise {exercise}"))
    ui.say("  " + hints.tiers[tier - 1])
    if tier < count:
        ui.say(ui.dim(f"Still stuck? ./workbook hint {exercise} shows hint {tier + 1}; "
                      f"--tier N shows any hint, --reset starts over."))
    else:
        ui.say(ui.dim("That is the most specific hint (--tier N shows an earlier one, --reset starts "
                      "over); the chapter's page explains the idea in full."))
    return 0
