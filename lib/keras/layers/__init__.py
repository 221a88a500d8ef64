"""`keras.layers` (as `tf.keras.layers`): the layers, each in the module of its kind.

- `base`: `Layer` (weights, tracking, `training=`), `clear_session`
- `core`: Dense, Activation, ReLU, LeakyReLU, Softmax, Dropout, Flatten, Reshape, Embedding, Lambda
- `normalization`: BatchNormalization, LayerNormalization
- `convolution`: Conv2D, Conv1D; `pooling`: Max/AveragePooling2D and 1D, global pooling
- `recurrent`: SimpleRNN, LSTM, GRU, Bidirectional; `preprocessing`: Normalization (adapt), Rescaling
- `merging`: Add, Subtract, Multiply, Average, Concatenate; `input_layer`: Input, InputLayer
"""

from .base import Layer
from ..naming import clear_session
from .convolution import Conv1D, Conv2D
from .core import Activation, Dense, Dropout, Embedding, Flatten, Identity, Lambda, LeakyReLU, ReLU, Reshape, Softmax
from .input_layer import Input, InputLayer
from .merging import Add, Average, Concatenate, Multiply, Subtract
from .normalization import BatchNormalization, LayerNormalization
from .preprocessing import Normalization, Rescaling
from .recurrent import GRU, LSTM, Bidirectional, SimpleRNN
from .pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
                      GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)

Convolution2D, MaxPool2D, AvgPool2D = Conv2D, MaxPooling2D, AveragePooling2D
Convolution1D, MaxPool1D, AvgPool1D = Conv1D, MaxPooling1D, AveragePooling1D

__all__ = ["Layer", "Bidirectional", "Normalization", "Rescaling", "GRU", "LSTM", "SimpleRNN", "Conv1D", "Convolution1D", "MaxPooling1D", "MaxPool1D", "AveragePooling1D", "AvgPool1D",
           "GlobalAveragePooling1D", "GlobalMaxPooling1D", "Conv2D", "Convolution2D", "Activation", "Dense", "Dropout", "Embedding",
           "Flatten", "Identity", "Lambda", "LeakyReLU", "ReLU", "Reshape", "Softmax", "Input", "InputLayer", "Add",
           "Average", "Concatenate", "Multiply", "Subtract", "BatchNormalization", "LayerNormalization",
           "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D", "GlobalMaxPooling2D", "MaxPooling2D",
           "MaxPool2D"]


def __dir__():
    return sorted(__all__)
