"""15 objectives after HIPS autograd's examples/, as their authors wrote them: does the source
transformer accept each one, and does its gradient equal the tape's?

    python benchmarks/autograd_examples.py

The objectives keep the authors' nested functions, closures, functions passed as arguments,
`*args`, builtin `sum`, `zip(*...)`, `functools.partial`, list appends, generators and
dicts/lists of parameters; only the imports change (`import numpy as np` for autograd.numpy,
`dualtape.scipy` for autograd.scipy), the data are small and seeded, names that two examples
define differently get the example's prefix, and the random draws inside an objective come from
`Fixed`, a stand-in for `npr.RandomState(0)` that returns the same numbers on every call (so
the objective is a deterministic function of its parameters). For each objective it prints
whether `dualtape.transforms.grad` accepts it (else the first line of its refusal) and whether
its gradient equals the tape's (`dualtape.grad`) within 1e-9 relative in float64, then
"accepted and equal: K of 15". tests/test_autograd_examples.py checks the corpus against finite
differences.
"""

import functools
import itertools
import sys
from dataclasses import dataclass

import numpy as np
from numpy.linalg import solve  # noqa: F401  (the GP example's import, used by its predict)

import dualtape
from dualtape.scipy.special import gammaln, logsumexp
from dualtape.scipy.stats import multivariate_normal as mvn
from dualtape.scipy.stats import norm

RTOL = 1e-9


class Fixed:
    """`npr.RandomState(seed)` for an objective: every draw of a shape returns the same numbers."""

    def __init__(self, seed=0):
        self.seed = seed

    def randn(self, *shape):
        return np.random.default_rng(self.seed).standard_normal(shape)

    def rand(self, *shape):
        return np.random.default_rng(self.seed).random(shape)


def init_random_params(scale, layer_sizes, rs=None):
    """Build a list of (weights, biases) tuples, one for each layer in the net."""
    rs = rs if rs is not None else np.random.default_rng(0)
    return [(scale * rs.standard_normal((m, n)), scale * rs.standard_normal(n))
            for m, n in itertools.pairwise(layer_sizes)]


# -- logistic_regression.py ----------------------------------------------------------------

def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def logistic_predictions(weights, inputs):
    return sigmoid(np.dot(inputs, weights))


lr_inputs = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
lr_targets = np.array([True, True, False, True])


def training_loss(weights):
    preds = logistic_predictions(weights, lr_inputs)
    label_probabilities = preds * lr_targets + (1 - preds) * (1 - lr_targets)
    return -np.sum(np.log(label_probabilities))


# -- neural_net.py -------------------------------------------------------------------------

def flatten(params):
    """autograd.misc.flatten for a list of tuples of arrays."""
    return np.concatenate([np.ravel(p) for layer in params for p in layer]), None


def mlp_neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    flattened, _ = flatten(params)
    return np.dot(flattened, flattened)


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(mlp_neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


# -- neural_net_regression.py --------------------------------------------------------------

def nn_predict(params, inputs, nonlinearity=np.tanh):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs


def log_gaussian(params, scale):
    flat_params, _ = flatten(params)
    return np.sum(norm.logpdf(flat_params, 0, scale))


def logprob(weights, inputs, targets, noise_scale=0.1):
    predictions = nn_predict(weights, inputs)
    return np.sum(norm.logpdf(predictions, targets, noise_scale))


def regression_objective(weights, inputs, targets):
    return -logprob(weights, inputs, targets) - log_gaussian(weights, 1.0)


# -- bayesian_neural_net.py ----------------------------------------------------------------

def make_nn_funs(layer_sizes, L2_reg, noise_variance, nonlinearity=np.tanh):
    shapes = list(itertools.pairwise(layer_sizes))
    num_weights = sum((m + 1) * n for m, n in shapes)

    def unpack_layers(weights):
        num_weight_sets = len(weights)
        for m, n in shapes:
            yield (
                weights[:, : m * n].reshape((num_weight_sets, m, n)),
                weights[:, m * n : m * n + n].reshape((num_weight_sets, 1, n)),
            )
            weights = weights[:, (m + 1) * n :]

    def predictions(weights, inputs):
        inputs = np.expand_dims(inputs, 0)
        for W, b in unpack_layers(weights):
            outputs = np.einsum("mnd,mdo->mno", inputs, W) + b
            inputs = nonlinearity(outputs)
        return outputs

    def logprob(weights, inputs, targets):
        log_prior = -L2_reg * np.sum(weights**2, axis=1)
        preds = predictions(weights, inputs)
        log_lik = -np.sum((preds - targets) ** 2, axis=1)[:, 0] / noise_variance
        return log_prior + log_lik

    return num_weights, predictions, logprob


def relu(x):
    return np.maximum(0, x)


bnn_num_weights, bnn_predictions, bnn_logprob = make_nn_funs([1, 6, 1], L2_reg=0.1, noise_variance=0.01,
                                                             nonlinearity=relu)


def bnn_objective(weights, inputs, targets):
    return -np.mean(bnn_logprob(weights, inputs, targets))


# -- rnn.py --------------------------------------------------------------------------------

def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params["change"], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]

    for input in inputs:
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


# -- lstm.py -------------------------------------------------------------------------------

def lstm_predict(params, inputs):
    def update_lstm(input, hiddens, cells):
        change = np.tanh(concat_and_multiply(params["change"], input, hiddens))
        forget = sigmoid(concat_and_multiply(params["forget"], input, hiddens))
        ingate = sigmoid(concat_and_multiply(params["ingate"], input, hiddens))
        outgate = sigmoid(concat_and_multiply(params["outgate"], input, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = np.repeat(params["init cells"], num_sequences, axis=0)

    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens, cells = update_lstm(input, hiddens, cells)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def lstm_log_likelihood(params, inputs, targets):
    logprobs = lstm_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


# -- gaussian_process.py -------------------------------------------------------------------

def make_gp_funs(cov_func, num_cov_params):
    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return mvn.logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, log_marginal_likelihood


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs**2, axis=2))


gp_num_params, gp_log_marginal_likelihood = make_gp_funs(rbf_covariance, num_cov_params=2)


def gp_objective(params, X, y):
    return -gp_log_marginal_likelihood(params, X, y)


# -- gmm.py --------------------------------------------------------------------------------

def log_normalize(x):
    return x - logsumexp(x)


def unpack_gmm_params(params):
    normalized_log_proportions = log_normalize(params["log proportions"])
    return normalized_log_proportions, params["means"], params["lower triangles"]


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + mvn.logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


# -- hmm_em.py -----------------------------------------------------------------------------

def log_partition_function(natural_params, data):
    if isinstance(data, list):
        return sum(map(functools.partial(log_partition_function, natural_params), data))

    log_pi, log_A, log_B = natural_params

    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]

    return logsumexp(log_alpha)


# -- black_box_svi.py ----------------------------------------------------------------------

def black_box_variational_inference(logprob, D, num_samples):
    def unpack_params(params):
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = Fixed(0)

    def variational_objective(params, t):
        mean, log_std = unpack_params(params)
        samples = rs.randn(num_samples, D) * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    return variational_objective, unpack_params


def svi_log_density(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = norm.logpdf(log_sigma, 0, 1.35)
    mu_density = norm.logpdf(mu, 0, np.exp(log_sigma))
    return sigma_density + mu_density


svi_objective, svi_unpack_params = black_box_variational_inference(svi_log_density, D=2, num_samples=20)


# -- variational_autoencoder.py ------------------------------------------------------------

def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(norm.logpdf(x, mu, np.exp(log_std)), axis=-1)


def unpack_gaussian_params(params):
    D = np.shape(params)[-1] // 2
    mean, log_std = params[:, :D], params[:, D:]
    return mean, log_std


def sample_diag_gaussian(mean, log_std, rs):
    return rs.randn(*mean.shape) * np.exp(log_std) + mean


def bernoulli_log_density(targets, unnormalized_logprobs):
    label_probabilities = -np.logaddexp(0, -unnormalized_logprobs * targets)
    return np.sum(label_probabilities, axis=-1)


def batch_normalize(activations):
    mbmean = np.mean(activations, axis=0, keepdims=True)
    return (activations - mbmean) / (np.std(activations, axis=0, keepdims=True) + 1)


def vae_neural_net_predict(params, inputs):
    for W, b in params[:-1]:
        outputs = batch_normalize(np.dot(inputs, W) + b)
        inputs = relu(outputs)
    outW, outb = params[-1]
    outputs = np.dot(inputs, outW) + outb
    return outputs


def nn_predict_gaussian(params, inputs):
    return unpack_gaussian_params(vae_neural_net_predict(params, inputs))


def p_images_given_latents(gen_params, images, latents):
    preds = vae_neural_net_predict(gen_params, latents)
    return bernoulli_log_density(images, preds)


def vae_lower_bound(gen_params, rec_params, data, rs):
    q_means, q_log_stds = nn_predict_gaussian(rec_params, data)
    latents = sample_diag_gaussian(q_means, q_log_stds, rs)
    q_latents = diag_gaussian_log_density(latents, q_means, q_log_stds)
    p_latents = diag_gaussian_log_density(latents, 0, 0)
    likelihood = p_images_given_latents(gen_params, data, latents)
    return np.mean(p_latents + likelihood - q_latents)


# -- generative_adversarial_net.py ---------------------------------------------------------

def logsigmoid(x):
    return x - np.logaddexp(0, x)


def gan_neural_net_predict(params, inputs):
    inpW, inpb = params[0]
    inputs = relu(np.dot(inputs, inpW) + inpb)
    for W, b in params[1:-1]:
        outputs = batch_normalize(np.dot(inputs, W) + b)
        inputs = relu(outputs)
    outW, outb = params[-1]
    outputs = np.dot(inputs, outW) + outb
    return outputs


def generate_from_noise(gen_params, num_samples, noise_dim, rs):
    noise = rs.rand(num_samples, noise_dim)
    samples = gan_neural_net_predict(gen_params, noise)
    return sigmoid(samples)


def gan_objective(gen_params, dsc_params, real_data, num_samples, noise_dim, rs):
    fake_data = generate_from_noise(gen_params, num_samples, noise_dim, rs)
    logprobs_fake = logsigmoid(gan_neural_net_predict(dsc_params, fake_data))
    logprobs_real = logsigmoid(gan_neural_net_predict(dsc_params, real_data))
    return np.mean(logprobs_real) - np.mean(logprobs_fake)


# -- sinusoid.py (the Taylor series), tanh.py ----------------------------------------------

def sin_taylor(x):
    currterm = x
    ans = currterm
    for i in range(1000):
        currterm = -currterm * x**2 / ((2 * i + 3) * (2 * i + 2))
        ans = ans + currterm
        if np.abs(currterm) < 0.2:
            break
    return ans


def tanh(x):
    return (1.0 - np.exp(-2 * x)) / (1.0 + np.exp(-(2 * x)))


def tanh_elementwise(x):
    """`elementwise_grad(tanh)(x)` is the gradient of the sum."""
    return np.sum(tanh(x))


# -- negative_binomial_maxlike.py ----------------------------------------------------------

def negbin_loglike(r, p, x):
    return gammaln(r + x) - gammaln(r) - gammaln(x + 1) + x * np.log(p) + r * np.log(1 - p)


nb_counts = np.array([0.0, 3.0, 1.0, 7.0, 2.0, 12.0, 4.0, 0.0, 5.0, 9.0])
loglike = lambda r, p: np.sum(negbin_loglike(r, p, nb_counts))  # noqa: E731  (the authors' lambda)


# -- the corpus ----------------------------------------------------------------------------

@dataclass
class Example:
    name: str
    f: object
    args: tuple
    argnums: object = 0


def _data():
    rng = np.random.default_rng(0)
    mlp = init_random_params(0.5, [4, 5, 3], rng)
    mlp_x = rng.standard_normal((6, 4))
    mlp_t = np.eye(3)[rng.integers(0, 3, 6)]
    reg = init_random_params(0.5, [1, 6, 6, 1], rng)
    reg_x = np.linspace(-1.5, 1.5, 8)[:, None]
    reg_t = np.cos(2 * reg_x) / 2
    bnn_w = 0.5 * rng.standard_normal((3, bnn_num_weights))

    def rnn_params(names):
        sizes = {"init hiddens": (1, 4), "init cells": (1, 4), "predict": (5, 3)}
        return {k: 0.3 * rng.standard_normal(sizes.get(k, (3 + 4 + 1, 4))) for k in names}
    seq = np.eye(3)[rng.integers(0, 3, (5, 2))]  # 5 steps, 2 sequences, alphabet of 3
    rnn_p = rnn_params(["init hiddens", "change", "predict"])
    lstm_p = rnn_params(["init cells", "init hiddens", "change", "forget", "ingate", "outgate", "predict"])
    gp_x = np.concatenate([np.linspace(0, 3, 5), np.linspace(6, 8, 5)])
    gp_y = (np.cos(gp_x) + 0.1 * rng.standard_normal(10)) / 2.0
    gp_x = ((gp_x - 4.0) / 2.0).reshape((10, 1))
    gp_params = 0.1 * rng.standard_normal(gp_num_params)
    gmm_p = {"log proportions": 0.3 * rng.standard_normal(3), "means": rng.standard_normal((3, 2)),
             "lower triangles": np.zeros((3, 2, 2)) + np.eye(2) + 0.2 * rng.standard_normal((3, 2, 2))}
    gmm_data = rng.standard_normal((12, 2))
    hmm_p = [np.log(rng.dirichlet(np.ones(3))), np.log(rng.dirichlet(np.ones(3), 3)),
             np.log(rng.dirichlet(np.ones(4), 3))]
    hmm_data = [rng.integers(0, 4, 6), rng.integers(0, 4, 4)]
    svi_p = np.array([-1.0, -1.0, -2.0, -2.0]) + 0.1 * rng.standard_normal(4)
    vae_gen = init_random_params(0.3, [2, 5, 6], rng)
    vae_rec = init_random_params(0.3, [6, 5, 4], rng)
    vae_data = np.where(rng.random((7, 6)) > 0.5, 1.0, -1.0)
    gan_gen = init_random_params(0.001, [3, 5, 5, 4], rng)
    gan_dsc = init_random_params(0.001, [4, 5, 5, 1], rng)
    gan_real = rng.random((6, 4))
    return [
        Example("logistic_regression", training_loss, (np.array([0.1, -0.2, 0.3]),)),
        Example("neural_net", log_posterior, (mlp, mlp_x, mlp_t, 1.0)),
        Example("neural_net_regression", regression_objective, (reg, reg_x, reg_t)),
        Example("bayesian_neural_net", bnn_objective, (bnn_w, reg_x, reg_t)),
        Example("rnn", rnn_log_likelihood, (rnn_p, seq, seq)),
        Example("lstm", lstm_log_likelihood, (lstm_p, seq, seq)),
        Example("gaussian_process", gp_objective, (gp_params, gp_x, gp_y)),
        Example("gmm", gmm_log_likelihood, (gmm_p, gmm_data)),
        Example("hmm", log_partition_function, (hmm_p, hmm_data)),
        Example("black_box_svi", svi_objective, (svi_p, 0)),
        Example("variational_autoencoder", vae_lower_bound, (vae_gen, vae_rec, vae_data, Fixed(1)), (0, 1)),
        Example("generative_adversarial_net", gan_objective, (gan_gen, gan_dsc, gan_real, 6, 3, Fixed(2)),
                (0, 1)),
        Example("sinusoid_taylor", sin_taylor, (2.5,)),
        Example("tanh", tanh_elementwise, (np.linspace(-3, 3, 7),)),
        Example("negative_binomial", loglike, (3.0, 0.4), (0, 1)),
    ]


EXAMPLES = _data()


def leaves(tree):
    """The arrays and floats of a gradient (lists, tuples, dicts in key order) as one vector."""
    if isinstance(tree, dict):
        return np.concatenate([leaves(tree[k]) for k in sorted(tree)]) if tree else np.zeros(0)
    if isinstance(tree, (list, tuple)):
        return np.concatenate([leaves(t) for t in tree]) if tree else np.zeros(0)
    return np.ravel(np.asarray(tree, dtype=float))


def tape_grad(example):
    return dualtape.grad(example.f, argnums=example.argnums)(*example.args)


def transform_grad(example):
    """The transformer's gradient; its TransformError propagates."""
    import dualtape.transforms as dt
    return dt.grad(example.f, argnums=example.argnums)(*example.args)


def max_rel_error(got, want):
    got, want = leaves(got), leaves(want)
    if got.shape != want.shape:
        return np.inf
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300), initial=0.0)) if got.size else 0.0


def equal(got, want, rtol=RTOL):
    got, want = leaves(got), leaves(want)
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=rtol * np.max(np.abs(want), initial=0))


def main():
    from dualtape.transforms import TransformError
    good = 0
    for example in EXAMPLES:
        want = tape_grad(example)
        try:
            got = transform_grad(example)
        except TransformError as error:
            print(f"{example.name:28s} refused: {str(error).splitlines()[0]}")
            continue
        except Exception as error:  # a crash: another exception than a refusal
            print(f"{example.name:28s} CRASH {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
            continue
        if equal(got, want):
            good += 1
            print(f"{example.name:28s} accepted, equal to the tape")
        else:
            print(f"{example.name:28s} accepted, DIFFERS from the tape: max relative error "
                  f"{max_rel_error(got, want):.3g}")
    print(f"accepted and equal: {good} of {len(EXAMPLES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
