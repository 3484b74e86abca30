import Decoders
