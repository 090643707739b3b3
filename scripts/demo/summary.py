"""Prints the demo's closing summary from `scanadmin report --format json` on stdin."""
import json
import sys

shift = json.load(sys.stdin)["shifts"][0]
packs = shift["packs"]
print(f"{shift['itemPasses']} item passes ({shift['partialPasses']} seen by only some cameras of their lane), "
      f"{shift['sightings']} sightings, {shift['uniqueCodes']} unique codes")
print(f"{packs['total']} packs: complete {packs['complete']}, short {packs['short']}, over {packs['over']}, "
      f"unexpected {packs['unexpected']}, unknown order {packs['unknownOrder']}")
