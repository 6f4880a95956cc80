def test_a_turn_cycle_through_the_cli(team):
    team.ok("card", "add", "Write it")
    nxt = team.ok("next", "--claim", agent="a1")
    assert nxt["action"] == "work" and nxt["card"]["id"] == "LX-1"
    team.ok("writeback", "LX-1", "--summary", "wrote it", agent="a1")
    done = team.ok("done", "LX-1", "--summary", "finished", agent="a1")
    assert done["card"]["status"] == "done"
