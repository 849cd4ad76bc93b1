extension VerificationKey {
    /// 256 short, common, concrete English words (3 to 7 lowercase ASCII letters, no two the
    /// same), so one random byte picks one word without bias. Changing the list changes no
    /// stored data: a verification key is stored as the text it was made as.
    static let words: [String] = [
        "acid", "acorn", "actor", "agent", "alarm", "album", "alley", "amber",
        "angle", "ankle", "apple", "apron", "arena", "arrow", "atlas", "attic",
        "aunt", "badge", "bagel", "baker", "bamboo", "banjo", "barn", "basil",
        "basin", "beach", "beard", "bell", "bench", "berry", "bike", "birch",
        "bison", "blade", "blank", "blaze", "block", "bloom", "board", "boat",
        "bolt", "bone", "book", "boot", "bottle", "bowl", "brain", "brick",
        "bridge", "broom", "brush", "bucket", "buddy", "bugle", "bunny", "cabin",
        "cable", "cactus", "camel", "candle", "canoe", "canyon", "cargo", "carrot",
        "castle", "cedar", "chalk", "cherry", "chess", "cider", "circle", "clam",
        "cliff", "clock", "cloud", "clover", "coast", "cobra", "cocoa", "comet",
        "coral", "cotton", "couch", "crab", "crane", "crayon", "creek", "crow",
        "crown", "cube", "daisy", "delta", "denim", "desk", "diary", "dingo",
        "dock", "donkey", "door", "dough", "dove", "dragon", "drum", "duck",
        "eagle", "easel", "echo", "elbow", "elm", "ember", "engine", "fable",
        "falcon", "feather", "fence", "fern", "ferry", "fiddle", "field", "flame",
        "flute", "fog", "forest", "fossil", "fox", "frost", "fudge", "garden",
        "garlic", "gecko", "ginger", "globe", "goose", "grape", "gravel", "guitar",
        "hammer", "harbor", "hazel", "hedge", "helmet", "heron", "hill", "honey",
        "hook", "horse", "igloo", "island", "ivory", "jacket", "jaguar", "jelly",
        "jewel", "jungle", "kayak", "kettle", "kiwi", "koala", "ladder", "lagoon",
        "lake", "lamp", "lemon", "lily", "lion", "lizard", "llama", "locket",
        "lotus", "magnet", "mango", "maple", "marble", "meadow", "melon", "mint",
        "mirror", "moose", "moth", "muffin", "nectar", "needle", "nest", "nickel",
        "noodle", "oak", "oasis", "ocean", "olive", "onion", "orbit", "otter",
        "owl", "paddle", "panda", "parrot", "peach", "pebble", "pepper", "piano",
        "pillow", "pine", "planet", "plum", "pond", "poppy", "puffin", "quartz",
        "quilt", "rabbit", "radar", "radish", "raven", "reef", "ribbon", "river",
        "robin", "rocket", "saddle", "salmon", "sandal", "scarf", "shell", "silver",
        "sled", "snail", "spider", "spoon", "squid", "stable", "stone", "straw",
        "sugar", "summit", "swan", "tablet", "teapot", "tiger", "toast", "tomato",
        "topaz", "tulip", "tunnel", "turtle", "valley", "velvet", "violin", "wagon",
        "walnut", "walrus", "whale", "willow", "window", "wizard", "yacht", "zebra",
    ]
}
