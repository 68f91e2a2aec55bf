"""Driver for `lmr record`: calls `generate_tasks` the way the upstream scripts do.

get_llm_decision_boundary.py calls it with 2-D points, a seed from the command line and
its --data_type / --class_sep / --circle_factor options; here the task counts and sample
sizes are small (a few tasks of 8 to 64 points) so the recording stays small. Each data
type is covered with its own option (class_sep for linear, factor for circle; moon has
none), several seeds, more than two dimensions for linear data (the only type that
supports them), odd sample sizes, and a call with no task.
"""
from data_utils import generate_tasks

# the defaults: linear data, class_sep=2
generate_tasks(3, 16, 2, 0)
generate_tasks(4, 10, 2, 7)

# linear data with the class separations the scripts pass (1.0 is the CLI default)
generate_tasks(3, 12, 2, 5, data_type="linear", class_sep=1.0)
generate_tasks(2, 16, 2, 11, data_type="linear", class_sep=0.5)
generate_tasks(2, 9, 2, 3, data_type="linear", class_sep=3.0)

# more than two features (linear only)
generate_tasks(2, 12, 3, 1, data_type="linear")
generate_tasks(2, 20, 5, 42, data_type="linear", class_sep=1.5)

# circles, with the default factor and others
generate_tasks(3, 16, 2, 0, data_type="circle")
generate_tasks(2, 15, 2, 21, data_type="circle", factor=0.3)
generate_tasks(2, 24, 2, 8, data_type="circle", factor=0.8, class_sep=1.0)

# moons
generate_tasks(3, 16, 2, 0, data_type="moon")
generate_tasks(2, 13, 2, 100, data_type="moon", factor=0.3, class_sep=1.0)

# one large task, as a single-task probe of the paper's figures
generate_tasks(1, 64, 2, 2024, data_type="linear", class_sep=1.0)

# no task at all
generate_tasks(0, 16, 2, 0)
