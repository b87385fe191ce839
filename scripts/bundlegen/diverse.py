"""placeholder"""


class Diverse:
    pass
