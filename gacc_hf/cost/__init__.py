"""What a run costs: the prices a user gives (`prices`), the tokens calls send and receive, the money they
come to, and the limits on it (`limits`, with the margin kept for what a server may bill: `margin`)."""
