"""The Keras tutorials of tests/keras_tutorials.py, run with `import dualtape as tf`, against
the values TensorFlow 2.21 / Keras 3.15 printed for them (tests/keras_tutorials_recorder.py).

Same data, same starting weights, same steps: losses, metrics and weights must agree to
float32 rounding (rtol 1e-5); a gradient entry to 1e-6 of its variable's largest gradient
entry (a sum of many float32 terms is exact only to a few ulp of its largest term, and TF's
own sums differ by an ulp from run to run).
"""

import pathlib
import sys

import numpy as np
import pytest

import dualtape as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import keras_tutorials  # noqa: E402

RTOL = 1e-5


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()


def close(got, expected, rtol=RTOL, atol=0.0, what=""):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=atol,
                               err_msg=what)


def close_gradients(got, expected, what):
    assert len(got) == len(expected), what
    for i, (g, e) in enumerate(zip(got, expected)):
        close(g, e, atol=1e-6 * np.max(np.abs(e)), what=f"{what}[{i}]")


# Recorded by tests/keras_tutorials_recorder.py with TensorFlow 2.21.0 and Keras 3.15 (CPU).
REFERENCES = {'basic_training_loop_keras': {'b': 1.7482564449310303,
                               'loss': [8.460749626159668, 5.89219856262207, 4.223343372344971,
                                        3.138657569885254, 2.4334046840667725, 1.974690556526184,
                                        1.6762230396270752, 1.4819509983062744, 1.3554537296295166,
                                        1.2730563879013062],
                               'w': 3.3077290058135986},
 'basic_training_loop_module': {'losses': [5.89219856262207, 4.223343849182129, 3.138657331466675,
                                           2.4334046840667725, 1.9746899604797363, 1.6762230396270752,
                                           1.4819509983062744, 1.355453610420227, 1.2730562686920166,
                                           1.2193650007247925],
                                'variables': ['Variable:0', 'Variable:0'],
                                'weights': [[4.639533042907715, 0.3930797278881073],
                                            [4.346022605895996, 0.707166314125061],
                                            [4.107024669647217, 0.9581284523010254],
                                            [3.912410259246826, 1.1586480140686035],
                                            [3.7539327144622803, 1.3188600540161133],
                                            [3.6248791217803955, 1.4468638896942139],
                                            [3.5197834968566895, 1.5491318702697754],
                                            [3.4341964721679688, 1.6308362483978271],
                                            [3.364494800567627, 1.6961102485656738],
                                            [3.3077290058135986, 1.7482564449310303]]},
 'custom_training_walkthrough': {'epoch_accuracy': [0.3333333432674408, 0.34166666865348816,
                                                    0.3583333194255829, 0.3583333194255829,
                                                    0.36666667461395264],
                                 'epoch_loss': [1.1090097427368164, 1.1043075323104858, 1.0997308492660522,
                                                1.0952304601669312, 1.0907939672470093],
                                 'initial_loss': 1.1077747344970703,
                                 'iterations': 21,
                                 'loss_after_step': 1.1154491901397705,
                                 'step_grads': [[0.0054552871733903885, -0.005525815766304731,
                                                 -0.02525050938129425, -0.004173249937593937,
                                                 0.012581388466060162, 0.045457519590854645,
                                                 -0.011440563015639782, 0.026151103898882866,
                                                 0.024426335468888283, 0.033155784010887146,
                                                 0.0002418872609268874, -0.01985730603337288,
                                                 0.015140233561396599, -0.00039154733531177044,
                                                 0.016821984201669693, 0.06570029258728027,
                                                 -0.02423679456114769, 0.0997767224907875,
                                                 -0.007796065881848335, -0.021467970684170723,
                                                 0.008080863393843174, 0.009999945759773254,
                                                 -0.05224283039569855, -0.0204935260117054,
                                                 -0.028957931324839592, -0.045296698808670044,
                                                 0.016833417117595673, -0.11460888385772705,
                                                 0.03896292299032211, 0.054296717047691345,
                                                 -0.0033538304269313812, 0.026076288893818855,
                                                 -0.03463675454258919, -0.026023969054222107,
                                                 -0.02139042317867279, -0.08196419477462769,
                                                 0.027234463021159172, -0.051897451281547546,
                                                 -0.004193831235170364, 0.02018747851252556],
                                                [-0.0019507959950715303, -0.02373363822698593,
                                                 -0.0461258664727211, -0.025430826470255852,
                                                 0.009252620860934258, 0.05593706667423248,
                                                 -0.02277601696550846, 0.08209265768527985,
                                                 0.027744648978114128, -0.0017135031521320343],
                                                [-0.007684673182666302, -0.00032885713153518736, 0.0, 0.0,
                                                 -0.013048783876001835, -0.01055112760514021, 0.0,
                                                 0.008374792523682117, 0.0, 0.000709307671058923,
                                                 0.022072281688451767, -0.0016778401331976056, 0.0,
                                                 2.51336441579042e-05, 0.04481145367026329,
                                                 0.0159378070384264, 0.0, -0.04072139784693718, 0.0,
                                                 -0.008722611702978611, -0.03196552395820618,
                                                 0.004358284175395966, 0.0, 0.0008465944556519389,
                                                 -0.008337368257343769, -0.04058922454714775, 0.0,
                                                 -0.005118952132761478, 0.0, 0.0, -0.013984138146042824,
                                                 -0.00027525468613021076, 0.0, 0.0, -0.028441717848181725,
                                                 -0.019551066681742668, 0.0, 0.017565147951245308, 0.0,
                                                 0.010837246663868427, 0.0396534726023674,
                                                 -0.007364255376160145, 0.0, 0.0, 0.05882914364337921,
                                                 0.009373638778924942, 0.0, -0.01865679770708084, 0.0,
                                                 -0.018640192225575447, 0.04725431650876999,
                                                 -0.0074468874372541904, 0.0, 0.0, 0.06579770147800446,
                                                 0.022457750514149666, 0.0, -0.028067028149962425, 0.0,
                                                 -0.018817275762557983, 0.009499059058725834,
                                                 -0.0008609395590610802, 0.0, 0.0, 0.013198856264352798,
                                                 0.006486887112259865, 0.0, -0.014386950992047787, 0.0,
                                                 0.0004695404786616564, 0.014059893786907196,
                                                 -0.0009036522242240608, 0.0, 0.00016268139006569982,
                                                 0.03411935642361641, 0.006796166300773621, 0.0,
                                                 -0.04426645115017891, 0.0, -0.0027828391175717115,
                                                 -0.024414967745542526, 0.002366528147831559, 0.0,
                                                 0.0004377923905849457, -0.01146022416651249,
                                                 -0.032680585980415344, 0.0, -0.0008309282711707056, 0.0,
                                                 0.0010685940505936742, -0.01766088232398033,
                                                 0.0017425107071176171, 0.0, 0.0004172770131845027,
                                                 0.0011826134286820889, -0.027471382170915604, 0.0,
                                                 -0.01232253946363926, 0.0, 0.0008610003278590739],
                                                [0.006392322480678558, -0.002809976926073432, 0.0,
                                                 0.0008068509050644934, 0.059398673474788666,
                                                 -0.03169676661491394, 0.0, -0.07662689685821533, 0.0,
                                                 -0.0008511845953762531],
                                                [-0.00992527138441801, 0.040485743433237076,
                                                 -0.030560478568077087, 0.007807299494743347,
                                                 0.006422548554837704, -0.014229850843548775, 0.0, 0.0, 0.0,
                                                 -0.0006321027758531272, 0.0003662817762233317,
                                                 0.000265821028733626, 0.0560394749045372,
                                                 0.04736921563744545, -0.10340869426727295,
                                                 -0.0443107932806015, 0.018941359594464302,
                                                 0.0253694336861372, 0.0, 0.0, 0.0, 0.0048195840790867805,
                                                 0.0047643412835896015, -0.009583924897015095, 0.0, 0.0, 0.0,
                                                 0.0038082206156104803, 0.0009521183674223721,
                                                 -0.004760339390486479],
                                                [-0.00894042570143938, 0.08906970918178558,
                                                 -0.08012929558753967]],
                                 'step_loss': 1.1169607639312744,
                                 'test_accuracy': 0.3499999940395355},
 'customizing_fit_compute_loss': {'evaluate': [6.475883483886719, 2.488957405090332],
                                  'history': {'loss': [8.305301666259766, 7.557348251342773,
                                                       6.853048801422119],
                                              'mae': [2.831223726272583, 2.6965880393981934,
                                                      2.563333511352539]},
                                  'metrics_names': ['loss', 'compile_metrics']},
 'customizing_fit_own_metrics': {'history': {'loss': [2.3398678302764893, 1.9856833219528198,
                                                      1.6741564273834229],
                                             'mae': [1.3860491514205933, 1.2571327686309814,
                                                     1.1360223293304443]}},
 'training_loop_from_scratch': {'step_losses': [2.3233354091644287, 2.300398349761963, 2.3000378608703613,
                                                2.3160715103149414, 2.3231828212738037, 2.300276279449463,
                                                2.2999982833862305, 2.315917730331421],
                                'step_one_grads': [[0.0050850543193519115, 0.04157579712630505,
                                                    0.00011517301027197391, -0.000150520441820845,
                                                    7.730598008492962e-05, -7.066533726174384e-05,
                                                    -0.00024958181893453],
                                                   [0.006055888254195452, 0.00017687098563785305,
                                                    0.00015145416546147317, 9.558669989928603e-05,
                                                    -0.0002350152499275282, -2.8281137929297984e-06,
                                                    -0.00031978124752640724],
                                                   [0.021322626620531082, 0.024319070782075895, 0.0, 0.0,
                                                    1.2080231499567162e-05, 0.0, 0.0],
                                                   [0.013573231175541878, 0.0013572943508610295,
                                                    -0.00021805427968502045, -0.0029509239830076694,
                                                    0.008724147453904152, -0.0029733353294432163,
                                                    0.00039330017170868814],
                                                   [0.045092109590768814, 0.037512492516532533,
                                                    1.747058195178397e-05, 1.8157190424972214e-05,
                                                    1.774770862539299e-05, 1.615029941604007e-05,
                                                    1.575110036355909e-05],
                                                   [0.07423266768455505, 0.02068589781745523,
                                                    0.023411797359585762, 0.0010698065161705017,
                                                    0.050990983843803406, -0.07423266768455505,
                                                    0.05029352381825447]],
                                'train_acc': [0.0859375, 0.0859375],
                                'val_acc': [0.03125, 0.03125],
                                'weight_names': ['kernel', 'bias', 'kernel', 'bias', 'kernel', 'bias']},
 'training_loop_with_added_losses': {'fit_loss': [16.414905548095703, 12.526538848876953],
                                     'losses_after_call': 1,
                                     'step_losses': [17.503101348876953, 15.326708793640137]},
 'fit_with_sample_weights_and_validation': {'evaluate': {'accuracy': 0.8399999737739563,
                                                         'loss': 0.5232374668121338,
                                                         'weighted_accuracy': 0.8312336802482605,
                                                         'xent': 0.4550658166408539},
                                            'evaluate_list': [0.4550658166408539, 0.8399999737739563,
                                                              0.4550658166408539, 0.8399999737739563,
                                                              0.8399999737739563],
                                            'history': {'accuracy': [0.3125, 0.6875, 0.8125],
                                                        'loss': [1.3342695236206055, 0.9885169863700867,
                                                                 0.7142361402511597],
                                                        'val_accuracy': [0.6499999761581421,
                                                                         0.949999988079071,
                                                                         0.949999988079071],
                                                        'val_loss': [1.0598939657211304, 0.804297924041748,
                                                                     0.35318249464035034],
                                                        'val_weighted_accuracy': [0.6699369549751282,
                                                                                  0.9147471189498901,
                                                                                  0.984745442867279],
                                                        'val_xent': [0.9700570106506348, 0.705301821231842,
                                                                     0.34010395407676697],
                                                        'weighted_accuracy': [0.34136322140693665,
                                                                              0.6699289679527283,
                                                                              0.8048515915870667],
                                                        'xent': [1.1611745357513428, 0.8540189862251282,
                                                                 0.6130257844924927]},
                                            'predict': [-2.8202028274536133, -0.6239818930625916,
                                                        0.8856053352355957, 1.3586043119430542,
                                                        -1.0108097791671753, -2.4641611576080322,
                                                        0.02749955654144287, -0.441633939743042,
                                                        -0.9895107746124268, 2.5219008922576904,
                                                        -1.843233346939087, -3.315725803375244]},
 'fit_with_learning_rate_callbacks': {'plateau': {'learning_rate': [0.05000000074505806, 0.05000000074505806,
                                                                    0.05000000074505806, 0.05000000074505806,
                                                                    0.02500000037252903,
                                                                    0.02500000037252903],
                                                  'loss': [1.0595080852508545, 0.7895486354827881,
                                                           0.5985419750213623, 0.4566735625267029,
                                                           0.3676035702228546, 0.3305966556072235]},
                                      'scheduler': {'learning_rate': [0.05000000074505806,
                                                                      0.05000000074505806,
                                                                      0.02500000037252903,
                                                                      0.012500000186264515,
                                                                      0.0062500000931322575,
                                                                      0.0031250000465661287],
                                                    'loss': [1.0595080852508545, 0.7895486354827881,
                                                             0.613770604133606, 0.5416358709335327,
                                                             0.5089539289474487, 0.493441641330719]}},
 'fit_with_regularizers': {'loss': [1.268052339553833, 1.174755334854126],
                           'losses': [0.002264707814902067, 0.03835819289088249, 0.0018497537821531296,
                                      0.008479347452521324]},
'basic_classification': {'argmax': [1, 7, 1, 1, 7, 7, 2, 1, 7, 7, 1, 1, 7, 1, 7, 7, 7, 1, 7, 1, 9, 7, 7, 2,
                                     8, 8, 1, 1, 7, 2, 1, 4],
                          'history': {'accuracy': [0.1145833358168602, 0.25, 0.2916666567325592],
                                      'loss': [2.34140944480896, 2.1699016094207764, 2.076382875442505]},
                          'predictions': [0.058058131486177444, 0.23516857624053955, 0.08176882565021515,
                                          0.05262002348899841, 0.07686328887939453, 0.12604106962680817,
                                          0.06289856135845184, 0.12428968399763107, 0.09938814491033554,
                                          0.0829036682844162, 0.0696440041065216, 0.1386776864528656,
                                          0.14243744313716888, 0.05368725582957268, 0.0883156955242157,
                                          0.08219451457262039, 0.09181639552116394, 0.15085886418819427,
                                          0.09500489383935928, 0.08736321330070496],
                          'test': [1.9162406921386719, 0.5]},
 'basic_regression': {'evaluate': 13.734456062316895,
                      'history': {'loss': [13.311259269714355, 13.227752685546875, 13.1458740234375,
                                           13.063789367675781, 12.979336738586426],
                                  'val_loss': [13.674853324890137, 13.587196350097656, 13.499565124511719,
                                               13.410183906555176, 13.316061973571777]},
                      'mean': [0.644672691822052, 51.0255241394043, 101.50436401367188, 10.928149223327637,
                               35.6962776184082, 22.193208694458008, 19.225980758666992, 90.5518569946289,
                               42.06028747558594],
                      'predict': [0.40273964405059814, 0.5034825801849365, 0.463199645280838]},
 'convolutional_network': {'history': {'accuracy': [0.0416666679084301, 0.2083333283662796],
                                       'loss': [2.702789306640625, 2.21417498588562],
                                       'val_accuracy': [0.125, 0.125],
                                       'val_loss': [2.233962059020996, 2.2086572647094727]},
                           'summary_rows': ['│ conv2d (Conv2D)                 │ (None, 30, 30, 32)     '
                                            '│           896 │',
                                            '│ max_pooling2d (MaxPooling2D)    │ (None, 15, 15, 32)     '
                                            '│             0 │',
                                            '│ conv2d_1 (Conv2D)               │ (None, 13, 13, 64)     '
                                            '│        18,496 │',
                                            '│ max_pooling2d_1 (MaxPooling2D)  │ (None, 6, 6, 64)       '
                                            '│             0 │',
                                            '│ conv2d_2 (Conv2D)               │ (None, 4, 4, 64)       '
                                            '│        36,928 │',
                                            '│ flatten (Flatten)               │ (None, 1024)           '
                                            '│             0 │',
                                            '│ dense (Dense)                   │ (None, 64)             '
                                            '│        65,600 │',
                                            '│ dense_1 (Dense)                 │ (None, 10)             '
                                            '│           650 │']}}


def run(tutorial):
    return tutorial(tf, tf.keras)


def test_custom_training_walkthrough():
    got, ref = run(keras_tutorials.custom_training_walkthrough), REFERENCES["custom_training_walkthrough"]
    close(got["initial_loss"], ref["initial_loss"], what="loss before training")
    close(got["step_loss"], ref["step_loss"], what="first step's loss")
    close_gradients(got["step_grads"], ref["step_grads"], "first step's gradients")
    close(got["loss_after_step"], ref["loss_after_step"], what="loss after one SGD step")
    close(got["epoch_loss"], ref["epoch_loss"], what="epoch losses (keras.metrics.Mean)")
    close(got["epoch_accuracy"], ref["epoch_accuracy"], what="epoch accuracies (SparseCategoricalAccuracy)")
    close(got["test_accuracy"], ref["test_accuracy"], what="test accuracy (keras.metrics.Accuracy)")
    assert got["iterations"] == ref["iterations"]


def test_basic_training_loop_with_a_module():
    got, ref = run(keras_tutorials.basic_training_loop_module), REFERENCES["basic_training_loop_module"]
    close(got["weights"], ref["weights"], what="w, b after each epoch")
    close(got["losses"], ref["losses"], what="loss after each epoch")
    assert got["variables"] == ref["variables"]


def test_basic_training_loop_with_keras_fit():
    got, ref = run(keras_tutorials.basic_training_loop_keras), REFERENCES["basic_training_loop_keras"]
    close(got["loss"], ref["loss"], what="fit's history['loss']")
    close([got["w"], got["b"]], [ref["w"], ref["b"]], what="w, b after fit")


def test_tf_variable_attributes_are_trained_as_keras_2_did():
    """The tutorial's own model holds tf.Variables: Keras 3 ignores them (and trains nothing, with a
    warning); dualtape tracks them, as Keras 2 did, and trains them like add_weight's weights."""
    x, y = keras_tutorials.line_data()

    class MyModelKeras(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def call(self, x):
            return self.w * x + self.b

    model = MyModelKeras()
    assert [v.name for v in model.trainable_variables] == ["Variable:0", "Variable:0"]
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1), loss=tf.keras.losses.mean_squared_error)
    history = model.fit(x, y, epochs=10, batch_size=1000, verbose=0)
    ref = REFERENCES["basic_training_loop_keras"]
    close(history.history["loss"], ref["loss"])
    close([model.w.numpy(), model.b.numpy()], [ref["w"], ref["b"]])


def test_training_loop_from_scratch():
    got, ref = run(keras_tutorials.training_loop_from_scratch), REFERENCES["training_loop_from_scratch"]
    assert got["weight_names"] == ref["weight_names"]
    close_gradients(got["step_one_grads"], ref["step_one_grads"], "first step's gradients (summaries)")
    close(got["step_losses"], ref["step_losses"], what="each step's loss")
    close(got["train_acc"], ref["train_acc"], what="training accuracy per epoch")
    close(got["val_acc"], ref["val_acc"], what="validation accuracy per epoch")


def test_customizing_fit_with_compute_loss():
    got, ref = run(keras_tutorials.customizing_fit_compute_loss), REFERENCES["customizing_fit_compute_loss"]
    assert sorted(got["history"]) == sorted(ref["history"]) == ["loss", "mae"]
    for key in ref["history"]:
        close(got["history"][key], ref["history"][key], what=f"history[{key!r}]")
    close(got["evaluate"], ref["evaluate"], what="evaluate() -> [loss, mae]")
    assert got["metrics_names"] == ref["metrics_names"]


def test_customizing_fit_with_its_own_metrics():
    got, ref = run(keras_tutorials.customizing_fit_own_metrics), REFERENCES["customizing_fit_own_metrics"]
    assert sorted(got["history"]) == ["loss", "mae"]
    for key in ref["history"]:
        close(got["history"][key], ref["history"][key], what=f"history[{key!r}]")


def test_training_loop_with_added_losses():
    """A layer's add_loss: model.losses holds this call's losses only, in the loop and in fit."""
    got, ref = run(keras_tutorials.training_loop_with_added_losses), REFERENCES["training_loop_with_added_losses"]
    assert got["losses_after_call"] == ref["losses_after_call"] == 1
    close(got["step_losses"], ref["step_losses"], what="loss + sum(model.losses) per step")
    close(got["fit_loss"], ref["fit_loss"], what="fit's loss, the added losses included")


def test_fit_with_sample_weights_validation_split_and_weighted_metrics():
    got, ref = run(keras_tutorials.fit_with_sample_weights_and_validation), \
        REFERENCES["fit_with_sample_weights_and_validation"]
    assert sorted(got["history"]) == sorted(ref["history"])
    for key in ref["history"]:
        close(got["history"][key], ref["history"][key], what=f"history[{key!r}]")
    assert sorted(got["evaluate"]) == sorted(ref["evaluate"]) == ["accuracy", "loss", "weighted_accuracy", "xent"]
    for key in ref["evaluate"]:
        close(got["evaluate"][key], ref["evaluate"][key], what=f"evaluate(...)[{key!r}]")
    # Keras 3.15's list repeats 'accuracy' (its weighted twin keeps the name inside the list of
    # names, then comes again as 'weighted_accuracy'): dualtape lists each metric once.
    loss, accuracy, xent, _, weighted_accuracy = ref["evaluate_list"]
    close(got["evaluate_list"], [loss, accuracy, xent, weighted_accuracy], what="evaluate() as a list")
    close(got["predict"], ref["predict"], what="predict()")


def test_learning_rate_callbacks():
    got, ref = run(keras_tutorials.fit_with_learning_rate_callbacks), REFERENCES["fit_with_learning_rate_callbacks"]
    for case in ("scheduler", "plateau"):
        assert sorted(got[case]) == ["learning_rate", "loss"]
        close(got[case]["learning_rate"], ref[case]["learning_rate"], what=f"{case}: learning rate per epoch")
        close(got[case]["loss"], ref[case]["loss"], what=f"{case}: loss per epoch")


def test_fit_with_weight_and_activity_regularizers():
    got, ref = run(keras_tutorials.fit_with_regularizers), REFERENCES["fit_with_regularizers"]
    close(got["losses"], ref["losses"], what="model.losses: activity penalty, then each regularized weight's")
    close(got["loss"], ref["loss"], what="fit's loss, penalties included")


def test_basic_classification():
    got, ref = run(keras_tutorials.basic_classification), REFERENCES["basic_classification"]
    for key in ("accuracy", "loss"):
        close(got["history"][key], ref["history"][key], what=f"history[{key!r}]")
    close(got["test"], ref["test"], what="evaluate: test loss and accuracy")
    close(got["predictions"], ref["predictions"], what="probability model's predictions")
    assert got["argmax"] == ref["argmax"]


def test_basic_regression():
    got, ref = run(keras_tutorials.basic_regression), REFERENCES["basic_regression"]
    close(got["mean"], ref["mean"], what="Normalization.adapt's mean")
    for key in ("loss", "val_loss"):
        close(got["history"][key], ref["history"][key], what=f"history[{key!r}]")
    close(got["evaluate"], ref["evaluate"], what="evaluate (mean absolute error)")
    close(got["predict"], ref["predict"], what="predict")


def test_convolutional_network():
    got, ref = run(keras_tutorials.convolutional_network), REFERENCES["convolutional_network"]
    for key in ("accuracy", "loss", "val_accuracy", "val_loss"):
        close(got["history"][key], ref["history"][key], what=f"history[{key!r}]")
    assert got["summary_rows"] == ref["summary_rows"]
