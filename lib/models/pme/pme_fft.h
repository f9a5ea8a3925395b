// The CPU PME model's 3-D real FFTs (FFTW3): a K1 x K2 x K3 real mesh, row-major with K3
// fastest, to its K1 x K2 x (K3/2 + 1) half spectrum and back, unnormalised (the backward
// transform of the forward one is K1 K2 K3 times the input), as FFTW defines them. Plans are made
// once per mesh size (FFTW_ESTIMATE: no timing runs at a run's start) and kept; FFTW's planner
// is not thread-safe, so a model plans from the thread that calls compute() only.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <memory>

namespace distspec::models::pme {

class RealFft3d {
 public:
  RealFft3d();
  ~RealFft3d();
  RealFft3d(const RealFft3d&) = delete;
  RealFft3d& operator=(const RealFft3d&) = delete;

  // Plans for a mesh of these dimensions, unless the last plans were for it.
  void resize(const std::array<int, 3>& mesh);

  std::size_t real_size() const;      // K1 K2 K3
  std::size_t spectrum_size() const;  // K1 K2 (K3/2 + 1)
  double* real();                     // the real mesh both transforms use
  std::complex<double>* spectrum();   // the half spectrum both transforms use

  void forward();   // real() -> spectrum()
  void backward();  // spectrum() -> real(); spectrum() is overwritten

 private:
  struct Plans;
  std::unique_ptr<Plans> plans_;
};

// Whether this build has the CPU FFT (FFTW3 was found when it was configured).
bool cpu_fft_available();

}  // namespace distspec::models::pme
