#include "models/pme/pme_fft.h"

#include "distspec/error.h"
#include "models/model_error.h"

#ifdef DISTSPEC_WITH_FFTW
#include <fftw3.h>
#endif

namespace distspec::models::pme {

#ifdef DISTSPEC_WITH_FFTW

struct RealFft3d::Plans {
  std::array<int, 3> mesh{};
  std::size_t real_size = 0, spectrum_size = 0;
  double* real = nullptr;
  fftw_complex* spectrum = nullptr;
  fftw_plan forward = nullptr, backward = nullptr;

  ~Plans() {
    if (forward) fftw_destroy_plan(forward);
    if (backward) fftw_destroy_plan(backward);
    fftw_free(real);
    fftw_free(spectrum);
  }
};

bool cpu_fft_available() { return true; }

RealFft3d::RealFft3d() = default;
RealFft3d::~RealFft3d() = default;

void RealFft3d::resize(const std::array<int, 3>& mesh) {
  if (plans_ && plans_->mesh == mesh) return;
  plans_.reset();
  auto p = std::make_unique<Plans>();
  p->mesh = mesh;
  p->real_size = static_cast<std::size_t>(mesh[0]) * mesh[1] * mesh[2];
  p->spectrum_size = static_cast<std::size_t>(mesh[0]) * mesh[1] * (mesh[2] / 2 + 1);
  p->real = fftw_alloc_real(p->real_size);
  p->spectrum = fftw_alloc_complex(p->spectrum_size);
  if (!p->real || !p->spectrum)
    throw Error(model_error_id::system, "", "pme: no memory for a " + std::to_string(mesh[0]) + " x " +
                                                std::to_string(mesh[1]) + " x " + std::to_string(mesh[2]) + " mesh",
                "a coarser mesh: a larger accuracy, or a smaller \"mesh\"");
  p->forward = fftw_plan_dft_r2c_3d(mesh[0], mesh[1], mesh[2], p->real, p->spectrum, FFTW_ESTIMATE);
  p->backward = fftw_plan_dft_c2r_3d(mesh[0], mesh[1], mesh[2], p->spectrum, p->real, FFTW_ESTIMATE);
  plans_ = std::move(p);
}

std::size_t RealFft3d::real_size() const { return plans_->real_size; }
std::size_t RealFft3d::spectrum_size() const { return plans_->spectrum_size; }
double* RealFft3d::real() { return plans_->real; }
std::complex<double>* RealFft3d::spectrum() { return reinterpret_cast<std::complex<double>*>(plans_->spectrum); }
void RealFft3d::forward() { fftw_execute(plans_->forward); }
void RealFft3d::backward() { fftw_execute(plans_->backward); }

#else

struct RealFft3d::Plans {};
bool cpu_fft_available() { return false; }
RealFft3d::RealFft3d() = default;
RealFft3d::~RealFft3d() = default;
[[noreturn]] static void no_fft() {
  throw Error(model_error_id::device, "/architecture", "architecture 'pme' on the cpu needs a DISTSPEC built with FFTW3",
              "install FFTW3 (Debian: libfftw3-dev) and configure again, or run it with device cuda");
}
void RealFft3d::resize(const std::array<int, 3>&) { no_fft(); }
std::size_t RealFft3d::real_size() const { no_fft(); }
std::size_t RealFft3d::spectrum_size() const { no_fft(); }
double* RealFft3d::real() { no_fft(); }
std::complex<double>* RealFft3d::spectrum() { no_fft(); }
void RealFft3d::forward() { no_fft(); }
void RealFft3d::backward() { no_fft(); }

#endif

}  // namespace distspec::models::pme
