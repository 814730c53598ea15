"""What a run costs: the prices a user gives (`prices`), the tokens calls send and receive, and the money
they come to."""
